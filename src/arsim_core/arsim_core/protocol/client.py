"""The bridge's side of protocol v1: one REQ socket to a backend, every receive with a timeout."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import zmq

from arsim_core.errors import BackendUnavailableError, ProtocolError
from arsim_core.protocol import framing, messages

# The longest a wait for a reply stays in C. The kernel may hand a stop signal (SIGINT, SIGTERM)
# to any of the process's threads; Python then runs its handler only once the main thread is
# back in the interpreter, so a single poll as long as the timeout held a Ctrl-C for seconds.
POLL_SLICE_MS = 100


class BackendClient:
    """Request/reply link to the render/physics backend (embedded or Unity)."""

    def __init__(self, address: str, timeout_s: float,
                 stop_requested: Callable[[], bool] | None = None) -> None:
        """``stop_requested`` ends a wait for a reply with KeyboardInterrupt once it is true:
        a process whose stop signal's KeyboardInterrupt Python dropped (raised in a
        ``__del__``) still stops at once, not after the timeout with a stopped backend."""
        self.address = address
        self.timeout_ms = int(timeout_s * 1000)
        self.stop_requested = stop_requested
        self._context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.connect(address)
        self._pending: tuple[str, int, int] | None = None  # (topic, step, time) sent, unanswered

    def request(self, topic: str, step: int, time_ns: int, body: Mapping[str, Any] | None = None,
                arrays: Mapping[str, np.ndarray] | None = None,
                timeout_ms: int | None = None) -> framing.Message:
        """Send one request and wait for its reply, which must echo the step and time."""
        self.send(topic, step, time_ns, body, arrays)
        return self.receive(timeout_ms)

    def request_body(self, body: messages.Body, step: int, time_ns: int,
                     timeout_ms: int | None = None) -> framing.Message:
        """``request`` with a typed body (arsim_core.protocol.messages)."""
        self.send_body(body, step, time_ns)
        return self.receive(timeout_ms)

    def send(self, topic: str, step: int, time_ns: int, body: Mapping[str, Any] | None = None,
             arrays: Mapping[str, np.ndarray] | None = None) -> None:
        """Send a request without waiting, so the caller can work while the backend does;
        ``receive`` collects the reply."""
        self._send(topic, step, time_ns, framing.encode(topic, step, time_ns, body, arrays))

    def send_body(self, body: messages.Body, step: int, time_ns: int) -> None:
        """``send`` with a typed body (arsim_core.protocol.messages)."""
        self._send(body.TOPIC, step, time_ns, messages.encode(body, step, time_ns))

    def _send(self, topic: str, step: int, time_ns: int,
              frames: list[bytes | memoryview]) -> None:
        if self._pending is not None:
            msg = f'{topic} of step {step} sent while {self._pending[0]} awaits its reply'
            raise ProtocolError(msg)
        self._socket.send_multipart(frames, copy=False)
        self._pending = (topic, step, time_ns)

    def receive(self, timeout_ms: int | None = None) -> framing.Message:
        """The reply to the request sent last; it must echo that request's step and time."""
        if self._pending is None:
            raise ProtocolError('no request awaits a reply')
        topic, step, time_ns = self._pending
        wait = self.timeout_ms if timeout_ms is None else timeout_ms
        if not self._answered_within(wait):
            msg = (f'backend at {self.address} did not answer {topic} of step {step} within '
                   f'{wait / 1000:.1f} s; it has stopped or is not running')
            raise BackendUnavailableError(msg)
        self._pending = None
        reply = framing.decode(self._socket.recv_multipart(copy=False))
        if reply.topic == framing.ERROR:
            msg = (f'backend at {self.address} refused {topic}: '
                   f'{messages.Error.from_wire(reply).text}')
            raise ProtocolError(msg)
        if reply.step != step or reply.time_ns != time_ns:
            msg = (f'backend answered step {reply.step} at {reply.time_ns} ns to {topic} of step '
                   f'{step} at {time_ns} ns')
            raise ProtocolError(msg)
        return reply

    def _answered_within(self, wait_ms: int) -> bool:
        """Whether a reply arrives within ``wait_ms``, polled in slices of POLL_SLICE_MS."""
        deadline = time.monotonic() + wait_ms / 1000
        while True:
            left_ms = max(0, int((deadline - time.monotonic()) * 1000))
            if self._socket.poll(min(left_ms, POLL_SLICE_MS)):
                return True
            if self.stop_requested is not None and self.stop_requested():
                raise KeyboardInterrupt
            if left_ms == 0:
                return False

    def close(self) -> None:
        self._socket.close()
