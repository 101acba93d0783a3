// The arsim web view: the track from above, the cars with their footprints and scans, the
// standings, a camera, and the pacing controls. The server sends a "hello" per track, a
// "pacing" when it changes and a "frame" per snapshot over /ws; the buttons send {op: ...}
// commands back (docs/view.md). Where there is race control a "race" message comes a few
// times a second: the session and flag, the timing tower, the incidents and, at the end, the
// results.
'use strict';

const COLOURS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2',
                 '#17becf'];
const HELD = 'sim time waits at 0 for a driver\'s first command: start your stack, or run '
  + 'with autopilot:=follow_the_gap';
const TEXT_PERIOD_MS = 500;  // how often the numbers on the page change
const $ = (id) => document.getElementById(id);
// Two layers: the track, drawn again only when the picture moves, and the cars and scans on
// top, drawn for every frame; redrawing only what changed keeps the page light.
const canvas = $('top-view');
const context = canvas.getContext('2d');
const trackLayer = $('track-layer');
const trackContext = trackLayer.getContext('2d');
let trackDrawn = '';  // the placement the track layer shows

// What the page knows; window.arsimView lets a test read it.
const view = {
  hello: null, frame: null, frames: 0, pacing: { paused: false, real_time_factor: 0 },
  trackImage: null, trackLoaded: false, textDue: 0,
  follow: '', zoom: 1, pan: { x: 0, y: 0 }, measuredRtf: null, lastFrameAt: null,
  race: null, markers: [],  // the newest race message; incident markers as last drawn
};
window.arsimView = view;

let socket = null;

function connect() {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  socket = new WebSocket(`${scheme}://${location.host}/ws`);
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    say('disconnected; trying again…', true);
    setTimeout(connect, 1000);
  };
  socket.onopen = () => say('');
}

function send(command) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(command));
}

function say(text, error = false) {
  $('message').textContent = text;
  $('message').className = error ? 'error' : 'dim';
}

function receive(message) {
  if (message.type === 'hello') onHello(message);
  else if (message.type === 'frame') onFrame(message);
  else if (message.type === 'pacing') onPacing(message);
  else if (message.type === 'race') onRace(message);
  else if (message.type === 'error') say(message.message, true);
}

function onHello(hello) {
  view.hello = hello;
  view.trackLoaded = false;
  $('track').textContent = hello.track.name;
  const image = new Image();
  image.onload = () => { view.trackImage = image; view.trackLoaded = true; draw(); };
  image.src = `track.png?name=${encodeURIComponent(hello.track.name)}&t=${Date.now()}`;
  fillSelect($('follow'), hello.cars.map((car) => car.name), 'whole track');
  fillSelect($('camera'), hello.cameras, 'none');
}

function fillSelect(select, values, none) {
  const chosen = select.value;
  select.replaceChildren(new Option(none, ''), ...values.map((v) => new Option(v, v)));
  if (values.includes(chosen)) select.value = chosen;
}

function onFrame(frame) {
  const now = performance.now();
  if (view.frame && view.lastFrameAt !== null && now > view.lastFrameAt) {
    const rtf = (frame.time - view.frame.time) / ((now - view.lastFrameAt) / 1000);
    view.measuredRtf = view.measuredRtf === null ? rtf : 0.8 * view.measuredRtf + 0.2 * rtf;
  }
  if (frame.time === 0) say(HELD);
  else if (view.frame && view.frame.time === 0) say('');
  view.frame = frame;
  view.frames += 1;
  view.lastFrameAt = now;
  if (now >= view.textDue) {  // text costs the page a layout: a few times a second is plenty
    view.textDue = now + TEXT_PERIOD_MS;
    setText($('sim-time'), frame.time.toFixed(1));
    showRtf();
    showStandings(frame.standings);
  }
  requestAnimationFrame(draw);
}

function onPacing(pacing) {
  view.pacing = pacing;
  if (pacing.paused) view.measuredRtf = null;
  setText($('play-pause'), pacing.paused ? 'Play' : 'Pause');
  const target = String(pacing.real_time_factor);
  if ([...$('target-rtf').options].some((o) => o.value === target)) $('target-rtf').value = target;
  showRtf();
}

function showRtf() {
  setText($('rtf'), view.pacing.paused ? 'paused'
    : (view.measuredRtf === null ? '–' : view.measuredRtf.toFixed(0)));
}

const lap = (seconds) => (seconds === null || seconds === undefined ? '–' : seconds.toFixed(1));

// Text is set only where it changed: every change costs the page a layout.
function setText(element, text) {
  const value = String(text);
  if (element.textContent !== value) element.textContent = value;
}

function showStandings(standings) {
  const body = $('standings').tBodies[0];
  while (body.rows.length > standings.length) body.deleteRow(-1);
  standings.forEach((car, index) => {
    const row = body.rows[index] || body.insertRow();
    const cells = [car.position, car.name, `${car.laps} + ${lap(car.lap_time)}`,
      lap(car.last_lap), lap(car.best_lap)];
    while (row.cells.length < cells.length) row.insertCell();
    cells.forEach((text, i) => setText(row.cells[i], text));
    const kind = car.off_track ? 'off-track' : '';
    if (row.className !== kind) row.className = kind;
  });
}

// --- race control -------------------------------------------------------------------------
const STATUS = { running: '', finished: 'fin', dnf: 'DNF', dsq: 'DSQ' };
const gap = (row, seconds) => {
  if (row.laps_behind > 0) return `+${row.laps_behind} lap${row.laps_behind > 1 ? 's' : ''}`;
  return seconds === null || seconds === undefined ? '' : `+${seconds.toFixed(3)}`;
};
const penalty = (row) => (row.penalty_s ? `+${row.penalty_s.toFixed(0)} s` : '')
  + (row.warnings ? ` ${row.warnings}W` : '');

function onRace(race) {
  view.race = race;
  const event = race.event;
  $('session').hidden = !event;
  if (event) {
    setText($('session-name'), `${event.session} (${event.kind})`);
    setText($('flag'), event.flag);
    $('flag').className = `flag ${event.flag}`;
    setText($('lights'), event.flag === 'lights' ? '●'.repeat(event.lights) : '');
    let remaining = '';
    if (event.finished) remaining = 'event over';
    else if (event.laps_remaining >= 0) remaining = `${event.laps_remaining} laps to go`;
    else if (event.time_remaining_s !== null) {
      const left = Math.ceil(event.time_remaining_s);
      remaining = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')} left`;
    }
    setText($('remaining'), remaining);
  }
  $('tower').hidden = !event;
  $('standings').hidden = Boolean(event);
  if (event) {
    fillRows($('tower'), race.tower, (row, i) => [row.position, row.car, row.laps,
      i === 0 ? 'leader' : gap(row, row.gap_s), i === 0 ? '' : gap(row, row.interval_s),
      lap(row.last_lap_s), lap(row.best_lap_s), penalty(row), STATUS[row.status] ?? row.status]);
  }
  showResults(race.results);
  const list = $('incidents');
  list.hidden = race.incidents.length === 0;
  list.replaceChildren(...race.incidents.slice(-8).reverse().map((incident) => {
    const item = document.createElement('li');
    item.textContent = `${incident.time.toFixed(1)} s ${incident.car}: ${incident.detail}`;
    return item;
  }));
  requestAnimationFrame(draw);
}

function fillRows(table, rows, cellsOf) {
  const body = table.tBodies[0];
  while (body.rows.length > rows.length) body.deleteRow(-1);
  rows.forEach((data, index) => {
    const row = body.rows[index] || body.insertRow();
    const cells = cellsOf(data, index);
    while (row.cells.length < cells.length) row.insertCell();
    cells.forEach((text, i) => setText(row.cells[i], text));
    row.className = data.status || '';
    row.dataset.car = data.car;
    row.cells[cells.length - 2].className = data.penalty_s ? 'penalty' : '';
  });
}

const resultCells = (row) => [row.position, row.car, row.laps,
  row.total_time_s === null ? '' : row.total_time_s.toFixed(3), lap(row.best_lap_s),
  row.position === 1 ? '' : gap(row, row.gap_s), penalty(row), STATUS[row.status] ?? row.status];

function showResults(results) {
  $('results').hidden = !results;
  if (!results) return;
  fillRows($('classification'), results.classification, resultCells);
  const shown = $('session-results');
  if (shown.childElementCount === results.sessions.length) return;
  shown.replaceChildren(...results.sessions.map((session) => {
    const table = $('classification').cloneNode(true);
    table.removeAttribute('id');
    table.caption.textContent = `${session.name} (${session.kind})`;
    table.tBodies[0].replaceChildren();
    fillRows(table, session.rows, resultCells);
    return table;
  }));
}

// Incidents where the stewards ruled: a marker each, its ruling on hover.
function drawIncidents(to) {
  view.markers = [];
  if (!view.race) return;
  context.font = 'bold 11px system-ui, sans-serif';
  for (const incident of view.race.incidents) {
    const x = to.x(incident.x);
    const y = to.y(incident.y);
    context.beginPath();
    context.arc(x, y, 8, 0, 2 * Math.PI);
    context.fillStyle = incident.verdict === 'no_action' ? '#bbb' : '#ff9800';
    context.fill();
    context.strokeStyle = '#000';
    context.stroke();
    context.fillStyle = '#000';
    context.fillText('!', x - 2, y + 4);
    view.markers.push({ x, y, title: `${incident.rule}: ${incident.verdict} — `
      + `${incident.car}${incident.other ? ` / ${incident.other}` : ''} at `
      + `${incident.time.toFixed(1)} s${incident.session ? ` (${incident.session})` : ''}\n`
      + incident.detail });
  }
}

// --- drawing ------------------------------------------------------------------------------
function worldToCanvas() {
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  const placement = view.hello && view.hello.track.image;
  let centre = { x: 0, y: 0 };
  let scale = 20;
  if (placement) {
    const spanX = placement.width * placement.resolution;
    const spanY = placement.height * placement.resolution;
    scale = Math.min(width / spanX, height / spanY);
    centre = { x: placement.x_min + spanX / 2, y: placement.y_max - spanY / 2 };
  }
  const followed = view.frame && view.frame.cars.find((car) => car.name === view.follow);
  if (followed) { centre = { x: followed.x, y: followed.y }; scale = Math.max(scale, 40); }
  scale *= view.zoom;
  return {
    scale,
    x: (x) => (x - centre.x) * scale + width / 2 + view.pan.x,
    y: (y) => height / 2 - (y - centre.y) * scale + view.pan.y,
  };
}

function fit(layer, layerContext) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.round(layer.clientWidth * ratio);
  const height = Math.round(layer.clientHeight * ratio);
  if (layer.width !== width || layer.height !== height) {
    layer.width = width;
    layer.height = height;
  }
  layerContext.setTransform(ratio, 0, 0, ratio, 0, 0);
}

function draw() {
  fit(canvas, context);
  context.clearRect(0, 0, canvas.clientWidth, canvas.clientHeight);
  if (!view.hello) return;
  const to = worldToCanvas();
  drawTrack(to);
  if (!view.frame) return;
  view.frame.cars.forEach((car, index) => {
    const colour = COLOURS[index % COLOURS.length];
    for (const [key, points] of Object.entries(view.frame.scans)) {
      if (key.startsWith(`${car.name}/`)) drawScan(to, points, colour);
    }
    drawCar(to, car, view.hello.cars.find((c) => c.name === car.name), colour);
  });
  drawIncidents(to);
}

function drawTrack(to) {
  const placement = view.hello.track.image;
  const key = [view.trackLoaded, to.x(0), to.y(0), to.scale, trackLayer.clientWidth,
    trackLayer.clientHeight].join();
  if (key === trackDrawn) return;
  trackDrawn = key;
  fit(trackLayer, trackContext);
  trackContext.fillStyle = '#f5f5f5';
  trackContext.fillRect(0, 0, trackLayer.clientWidth, trackLayer.clientHeight);
  if (view.trackLoaded) {
    trackContext.drawImage(view.trackImage, to.x(placement.x_min), to.y(placement.y_max),
      placement.width * placement.resolution * to.scale,
      placement.height * placement.resolution * to.scale);
  }
  drawCenterline(to, view.hello.track.centerline);
}

function drawCenterline(to, points) {
  if (points.length < 2) return;
  const pen = trackContext;
  pen.save();
  pen.setLineDash([6, 6]);
  pen.strokeStyle = '#999';
  pen.beginPath();
  points.forEach(([x, y], i) => (i ? pen.lineTo(to.x(x), to.y(y)) : pen.moveTo(to.x(x), to.y(y))));
  pen.closePath();
  pen.stroke();
  pen.restore();
}

function drawScan(to, points, colour) {
  context.fillStyle = colour;
  context.globalAlpha = 0.6;
  const size = Math.max(1.5, Math.min(4, to.scale * 0.04));
  for (const [x, y] of points) context.fillRect(to.x(x) - size / 2, to.y(y) - size / 2, size, size);
  context.globalAlpha = 1;
}

function drawCar(to, car, shape, colour) {
  const length = Math.max((shape ? shape.length : 0.5) * to.scale, 8);
  const width = Math.max((shape ? shape.width : 0.3) * to.scale, 5);
  context.save();
  context.translate(to.x(car.x), to.y(car.y));
  context.rotate(-car.yaw);
  context.fillStyle = colour;
  context.strokeStyle = '#000';
  context.fillRect(-length / 2, -width / 2, length, width);
  context.strokeRect(-length / 2, -width / 2, length, width);
  context.beginPath(); // the nose
  context.moveTo(length / 2, 0);
  context.lineTo(length / 2 - Math.min(length, width) * 0.6, -width / 2);
  context.lineTo(length / 2 - Math.min(length, width) * 0.6, width / 2);
  context.closePath();
  context.fillStyle = '#fff';
  context.fill();
  context.restore();
  context.fillStyle = '#000';
  context.fillText(car.name, to.x(car.x) + length / 2 + 4, to.y(car.y) - width / 2 - 4);
}

// --- input ----------------------------------------------------------------------------------
$('play-pause').onclick = () => send({ op: view.pacing.paused ? 'play' : 'pause' });
$('step').onclick = () => send({ op: 'step', frames: 1 });
$('target-rtf').onchange = (event) => send({ op: 'set_real_time_factor', value: Number(event.target.value) });
$('follow').onchange = (event) => { view.follow = event.target.value; view.pan = { x: 0, y: 0 }; draw(); };
$('camera').onchange = () => pollCamera();
document.addEventListener('keydown', (event) => {
  if (event.target.tagName === 'SELECT') return;
  if (event.key === ' ') { event.preventDefault(); $('play-pause').click(); }
  if (event.key === 'ArrowRight') $('step').click();
});
canvas.addEventListener('wheel', (event) => {
  event.preventDefault();
  view.zoom *= Math.exp(-event.deltaY * 0.001);
  draw();
}, { passive: false });
canvas.addEventListener('pointerdown', (event) => {
  const start = { x: event.clientX - view.pan.x, y: event.clientY - view.pan.y };
  const move = (e) => { view.pan = { x: e.clientX - start.x, y: e.clientY - start.y }; draw(); };
  canvas.setPointerCapture(event.pointerId);
  canvas.addEventListener('pointermove', move);
  canvas.addEventListener('pointerup', () => canvas.removeEventListener('pointermove', move), { once: true });
});
canvas.addEventListener('mousemove', (event) => {
  const box = canvas.getBoundingClientRect();
  const x = event.clientX - box.left;
  const y = event.clientY - box.top;
  const near = view.markers.find((m) => Math.hypot(m.x - x, m.y - y) <= 10);
  const title = near ? near.title : '';
  if (canvas.title !== title) canvas.title = title;
});
window.addEventListener('resize', draw);

// One camera image at a time: the next is asked for when the last has arrived.
let cameraTimer = null;
async function pollCamera() {
  clearTimeout(cameraTimer);
  const key = $('camera').value;
  const image = $('camera-image');
  if (!key) { image.removeAttribute('src'); return; }
  try {
    const response = await fetch(`camera.jpg?key=${encodeURIComponent(key)}`, { cache: 'no-store' });
    if (response.ok && $('camera').value === key) {
      const old = image.src;
      image.src = URL.createObjectURL(await response.blob());
      if (old.startsWith('blob:')) URL.revokeObjectURL(old);
    }
  } catch (error) { /* the simulation stopped; the socket says so */ }
  cameraTimer = setTimeout(pollCamera, 100);
}

connect();
