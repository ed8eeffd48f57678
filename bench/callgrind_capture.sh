#!/usr/bin/env bash
# bench/callgrind_capture.sh [3.X ...] [-- options of callgrind_capture.py] — builds
# build/bench-cg-3XY per Python (default 3.10-3.13) and runs bench/callgrind_capture.py with it.
#
# Why a separate build: nanobind links Release modules with -Wl,-s, and callgrind needs symbols.
# RelWithDebInfo with Release's flags (-O3 -DNDEBUG -fno-stack-protector, LTO) plus -g
# compiles the same code as Release (-g does not change code generation) and skips the strip.
# Interpreter: $CALLSITE_CG_VENV_<3XY> if set, else .venv/py3.X (scripts/setup.sh --bench).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

versions=()
while [[ $# -gt 0 && "$1" != "--" ]]; do versions+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
[[ ${#versions[@]} -eq 0 ]] && versions=(3.10 3.11 3.12 3.13)
command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 1; }

flags="-O3 -g -DNDEBUG -fno-stack-protector"
for v in "${versions[@]}"; do
  tag="${v/./}"
  var="CALLSITE_CG_VENV_${tag}"
  venv="${!var:-}"
  if [[ -z "$venv" && -x "$root/.venv/py$v/bin/python" ]]; then venv="$root/.venv/py$v"; fi
  py="$venv/bin/python"
  if [[ ! -x "$py" ]]; then echo "== Python $v: no interpreter venv found, skipped" >&2; continue; fi
  build="$root/build/bench-cg-$tag"
  cmake -S "$root" -B "$build" -G Ninja -DPython_EXECUTABLE="$py" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION_RELWITHDEBINFO=ON >/dev/null
  cmake --build "$build" >/dev/null
  PYTHONPATH="$build/pkg" "$py" "$root/bench/callgrind_capture.py" "$@"
  echo
done
