#!/usr/bin/env bash
# Builds and tests the C# side of arsim with Debian's Mono (no Unity, no NuGet):
#
#   unity/build.sh host   the console host: unity/host/bin/arsim-unity-host.exe
#   unity/build.sh test   Arsim.Core's and the host's NUnit tests; the closing line says
#                         `C# tests: N passed, N failed`
#   unity/build.sh        both
#
# Each output is rebuilt only when a source is newer than it.
set -euo pipefail

UNITY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CORE="$UNITY/Assets/Arsim/Core"
CORE_TESTS="$UNITY/Assets/Arsim/Tests/Core"
HOST="$UNITY/host"
BIN="$HOST/bin"
INSTALL="sudo apt-get install -y mono-mcs mono-runtime libmono-posix4.0-cil nunit-console libnunit-framework2.6.3-cil"
MCS=(mcs -langversion:7.2 -nologo -warnaserror+ -debug-)

say() { echo "[unity] $*"; }

for tool in mcs mono nunit-console; do
  if ! command -v "$tool" >/dev/null; then
    say "$tool is missing; install Mono and NUnit with: $INSTALL"
    exit 2
  fi
done
NUNIT="$(find /usr/lib/cli -name nunit.framework.dll 2>/dev/null | sort | tail -n 1)"
[[ -n "$NUNIT" ]] || { say "the NUnit framework is missing; install it with: $INSTALL"; exit 2; }

# stale OUTPUT SOURCES...: whether OUTPUT is missing or older than any source.
stale() {
  local output="$1" source; shift
  [[ -f "$output" ]] || return 0
  for source in "$@"; do [[ "$source" -nt "$output" ]] && return 0; done
  return 1
}

mkdir -p "$BIN"
shopt -s nullglob
core_sources=("$CORE"/*.cs)
host_sources=("$HOST"/*.cs)
library_sources=()  # the host without its entry point, for its tests
for source in "${host_sources[@]}"; do
  [[ "$(basename "$source")" == Program.cs ]] || library_sources+=("$source")
done

build_host() {
  local exe="$BIN/arsim-unity-host.exe"
  if stale "$exe" "${core_sources[@]}" "${host_sources[@]}"; then
    say "building $(realpath --relative-to="$PWD" "$exe")"
    "${MCS[@]}" -out:"$exe" -r:Mono.Posix "${core_sources[@]}" "${host_sources[@]}"
  fi
}

run_tests() {
  local dll="$BIN/Arsim.Tests.dll"
  local tests=("$CORE_TESTS"/*.cs "$HOST"/Tests/*.cs)
  if stale "$dll" "${core_sources[@]}" "${library_sources[@]}" "${tests[@]}"; then
    say "building the C# tests"
    "${MCS[@]}" -target:library -out:"$dll" -r:"$NUNIT" -r:System.Core \
      "${core_sources[@]}" "${library_sources[@]}" "${tests[@]}"
  fi
  local log="$BIN/tests.log" status=0
  (cd "$BIN" && nunit-console -nologo -nodots -xml="$BIN/TestResult.xml" "$dll") >"$log" 2>&1 || status=$?
  local run failed
  run="$(sed -n 's/^Tests run: \([0-9]*\), Errors: \([0-9]*\), Failures: \([0-9]*\).*/\1 \2 \3/p' "$log" | tail -n 1)"
  if [[ -z "$run" ]]; then
    cat "$log"
    say "NUnit did not report a result"
    exit 1
  fi
  read -r total errors failures <<<"$run"
  failed=$((errors + failures))
  if ((failed > 0 || status != 0)); then
    sed -n '/^Errors and Failures:/,/^Tests Not Run:/p' "$log"
  fi
  echo "C# tests: $((total - failed)) passed, $failed failed"
  ((failed == 0 && status == 0))
}

case "${1:-all}" in
  host) build_host ;;
  test) run_tests ;;
  all) build_host; run_tests ;;
  *) say "unknown target '$1'; expected host, test or all"; exit 2 ;;
esac
