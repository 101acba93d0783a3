# shellcheck shell=bash
# Source this file in bash to use the arsim workspace in the current shell:
#   source tools/env.sh
# It activates .venv and sources install/setup.bash (both made by tools/setup.sh). With the
# PyPI ROS 2 runtime it also keeps the venv prefix in AMENT_PREFIX_PATH (ament_index finds
# the runtime's packages there) and defaults RMW_IMPLEMENTATION to the RMW the wheels ship.
# No `set -euo pipefail` here: options set in a sourced file would leak into the user's shell.

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "[arsim] tools/env.sh changes the calling shell: use 'source tools/env.sh'" >&2
  exit 1
fi

_arsim_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -f "$_arsim_root/.venv/bin/activate" || ! -f "$_arsim_root/install/setup.bash" ]]; then
  echo "[arsim] the workspace is not set up yet: run 'make build' (tools/setup.sh) first" >&2
  unset _arsim_root
  return 1
fi

# shellcheck disable=SC1091
source "$_arsim_root/.venv/bin/activate"
# shellcheck disable=SC1091
source "$_arsim_root/install/setup.bash"

if [[ "$(cut -d' ' -f1 "$_arsim_root/.venv/.arsim/mode" 2>/dev/null)" == pypi ]]; then
  case ":${AMENT_PREFIX_PATH:-}:" in
    *":$VIRTUAL_ENV:"*) ;;
    *) export AMENT_PREFIX_PATH="${AMENT_PREFIX_PATH:+$AMENT_PREFIX_PATH:}$VIRTUAL_ENV" ;;
  esac
  export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
fi
unset _arsim_root
