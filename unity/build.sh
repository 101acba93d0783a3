#!/usr/bin/env bash
# Builds the C# side of arsim with Debian's Mono (no Unity, no NuGet) into unity/host/bin/:
#
#   bash unity/build.sh host   the console host, arsim-unity-host.exe (run it with mono)
#   bash unity/build.sh test   Arsim.Core.dll and Arsim.Tests.dll, then their NUnit tests; the
#                              closing line is `C# tests: N passed, N failed`
#   bash unity/build.sh [all]  both
#
# An output is rebuilt only when one of its inputs is newer or its list of sources changed, so
# a second run is quick. Exit status: 0 all well, 1 a build or a test failed, 2 a tool is
# missing (the message gives the command that installs it) or the target is unknown.
set -euo pipefail

UNITY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$UNITY/build.sh"
CORE="$UNITY/Assets/Arsim/Core"
CORE_TESTS="$UNITY/Assets/Arsim/Tests/Core"
HOST="$UNITY/host"
BIN="$HOST/bin"
INSTALL="sudo apt-get install -y mono-mcs mono-runtime nunit-console libnunit-framework2.6.3-cil"
# Unity's compiler takes C# 7.2 at most, so Mono's must refuse anything newer. Warnings are
# shown but fail nothing: Unity builds these sources with its own warning set.
MCS=(mcs -langversion:7.2 -nologo -debug- -warnaserror-)

say() { echo "[unity] $*"; }

target="${1:-all}"
case "$target" in
  host|test|all) ;;
  *) say "unknown target '$target'; expected host, test or all"; exit 2 ;;
esac

for tool in mcs mono nunit-console; do
  if ! command -v "$tool" >/dev/null; then
    say "$tool is missing; install Mono and NUnit with: $INSTALL"
    exit 2
  fi
done
NUNIT=/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
[[ -f "$NUNIT" ]] || NUNIT="$(find /usr/lib/cli -name nunit.framework.dll 2>/dev/null | sort | tail -n 1)"
if [[ -z "$NUNIT" ]]; then
  say "the NUnit framework is missing; install it with: $INSTALL"
  exit 2
fi

mkdir -p "$BIN"
if command -v flock >/dev/null; then  # one build at a time: make test and pytest may overlap
  exec 9>"$BIN/.build.lock"
  flock 9
fi

shopt -s nullglob
core_sources=("$CORE"/*.cs)
host_sources=("$HOST"/*.cs)
host_library=()  # the host without its entry point, for its tests
for source in "${host_sources[@]}"; do
  [[ "$(basename "$source")" == Program.cs ]] || host_library+=("$source")
done
test_sources=("$CORE_TESTS"/*.cs "$HOST"/Tests/*.cs "${host_library[@]}")

# up_to_date OUTPUT INPUT...: whether OUTPUT was built from exactly these inputs and is newer
# than each of them and than this script.
up_to_date() {
  local output="$1" input
  shift
  [[ -f "$output" && -f "$output.inputs" ]] || return 1
  [[ "$(cat "$output.inputs")" == "$(printf '%s\n' "$@")" ]] || return 1
  for input in "$@" "$SELF"; do
    [[ "$input" -nt "$output" ]] && return 1
  done
  return 0
}

# compile OUTPUT TARGET REFERENCES SOURCE...: mcs -target:TARGET with REFERENCES (comma
# separated; those given as paths count as inputs), unless OUTPUT is up to date. Returns
# non-zero when mcs fails, also where a caller tests it (set -e does not act there).
compile() {
  local output="$1" kind="$2" references="$3" reference
  shift 3
  local inputs=("$@") refs=()
  [[ -z "$references" ]] || IFS=, read -r -a refs <<<"$references"
  for reference in "${refs[@]}"; do
    [[ "$reference" != */* ]] || inputs+=("$reference")
  done
  if up_to_date "$output" "${inputs[@]}"; then
    return 0
  fi
  say "building ${output#"$UNITY"/}"
  rm -f "$output.inputs"
  if ! "${MCS[@]}" -target:"$kind" -out:"$output" ${references:+"-r:$references"} "$@"; then
    return 1
  fi
  printf '%s\n' "${inputs[@]}" >"$output.inputs"
}

build_host() {
  if [[ ! -f "$HOST/Program.cs" ]]; then
    say "skipping the host: $HOST/Program.cs does not exist yet"
    return 0
  fi
  if ! compile "$BIN/arsim-unity-host.exe" exe Mono.Posix "${core_sources[@]}" "${host_sources[@]}"; then
    say "the console host did not build (compiler output above)"
    return 1
  fi
}

# attribute NAME XML: the integer attribute NAME of the <test-results> element of XML.
attribute() {
  grep -m 1 -o "<test-results [^>]*" "$2" | grep -o " $1=\"[0-9]*\"" | grep -o '[0-9][0-9]*' || echo 0
}

run_tests() {
  local core="$BIN/Arsim.Core.dll" tests="$BIN/Arsim.Tests.dll"
  if ! compile "$core" library "" "${core_sources[@]}" ||
     ! compile "$tests" library "$core,$NUNIT" "${test_sources[@]}"; then
    say "the C# tests did not build (compiler output above)"
    return 1
  fi
  local result="$BIN/TestResult.xml" log="$BIN/tests.log" status=0
  rm -f "$result"
  (cd "$BIN" && nunit-console -nologo -nodots -xml="$result" "$tests") >"$log" 2>&1 || status=$?
  if [[ ! -s "$result" ]]; then
    cat "$log"
    say "NUnit wrote no result (exit status $status); its output is above and in $log"
    return 1
  fi
  local total errors failures inconclusive invalid passed failed
  total="$(attribute total "$result")"
  errors="$(attribute errors "$result")"
  failures="$(attribute failures "$result")"
  inconclusive="$(attribute inconclusive "$result")"
  invalid="$(attribute invalid "$result")"  # a test NUnit cannot run, such as a bad TestCase
  failed=$((errors + failures + invalid))
  passed=$((total - errors - failures - inconclusive))
  grep -E '^ *(Tests run|Not run):' "$log" || true
  if ((failed > 0)); then
    sed -n '/^\(Errors and Failures\|Tests Not Run\):/,$p' "$log"
  fi
  if ((failed == 0 && status != 0)); then
    say "nunit-console exited with status $status; its output is in $log"
    failed=1
  fi
  echo "C# tests: $passed passed, $failed failed"
  ((failed == 0))
}

case "$target" in
  host) build_host ;;
  test) run_tests ;;
  all)
    status=0
    build_host || status=1
    run_tests || status=1
    exit "$status"
    ;;
esac
