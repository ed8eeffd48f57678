#!/usr/bin/env bash
# bench/callgrind_capture.sh [3.X ...] [-- options of callgrind_capture.py] — builds
# build/bench-cg-3XY per Python (default: scripts/common.sh's host versions) with .venv/py3.X
# (scripts/setup.sh --bench) and runs bench/callgrind_capture.py with it.
#
# Why a separate build: nanobind links Release modules with -Wl,-s, and callgrind needs symbols.
# RelWithDebInfo with Release's flags (-O3 -DNDEBUG -fno-stack-protector, LTO) plus -g
# compiles the same code as Release (-g does not change code generation) and skips the strip.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

versions=()
while [[ $# -gt 0 && "$1" != "--" ]]; do versions+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
[[ ${#versions[@]} -eq 0 ]] && versions=("${CALLSITE_HOST_MINORS[@]}")
command -v valgrind >/dev/null || die "valgrind not found (apt-get install valgrind)"

flags="-O3 -g -DNDEBUG -fno-stack-protector"
for v in "${versions[@]}"; do
  py="$(callsite_venv "$v")/bin/python"
  if [[ ! -x "$py" ]]; then log "Python $v: no $py (scripts/setup.sh --bench $v), skipped"; continue; fi
  build="$CALLSITE_ROOT/build/bench-cg-${v/./}"
  cmake -S "$CALLSITE_ROOT" -B "$build" -G Ninja -DPython_EXECUTABLE="$py" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION_RELWITHDEBINFO=ON >/dev/null
  cmake --build "$build" >/dev/null
  PYTHONPATH="$build/pkg" "$py" "$CALLSITE_ROOT/bench/callgrind_capture.py" "$@"
  echo
done
