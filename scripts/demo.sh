#!/usr/bin/env bash
# scripts/demo.sh — sets up the demo's own small venv and runs `python -m callsite demo`: MLIR's
# own traceback switch against callsite's on the same program, a small DSL building real MLIR
# with source locations, and native frames of a C++ interpreter.
#
# Usage: scripts/demo.sh [SECTION ...]       (sections: python -m callsite demo --help)
#   CALLSITE_DEMO_PYTHON=3.X   the interpreter (default: 3.12, else 3.13, 3.11, 3.10: the first
#                              found; on 3.12+ iree's wheels are stable-ABI, where MLIR's own
#                              switch records no frame and callsite still gives the user's lines)
# Only requirements/demo.txt is installed (callsite's build tools and iree-base-compiler), into
# a cached venv (common.sh's callsite_cached_venv); .venv/demo-py3.X is a hard-linked copy of it,
# into which callsite is built (build/demo-py3.X, compiler cache shared with the test builds).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"
CANDIDATES=(3.12 3.13 3.11 3.10)
[ -z "${CALLSITE_DEMO_PYTHON:-}" ] || CANDIDATES=("$CALLSITE_DEMO_PYTHON")
for MINOR in "${CANDIDATES[@]}"; do
  why="$(callsite_skip_reason "$MINOR")" || break
  log "Python $MINOR: $why"; MINOR=
done
[ -n "$MINOR" ] || die "no usable Python among ${CANDIDATES[*]} for the demo (one on PATH or under pyenv)"
NAME="demo-py$MINOR"
VENV="$CALLSITE_ROOT/.venv/$NAME"
t0=$SECONDS
DEPS="$(callsite_cached_venv "$NAME" "$(callsite_find_python "$MINOR")" callsite_pip_install \
  "$CALLSITE_REQUIREMENTS/demo.txt")" || die "the demo's set-up failed (build/logs/pip-$NAME.log)"
callsite_linked_venv "$DEPS" "$VENV"
: >"$CALLSITE_LOGS/build-$NAME.log"
callsite_install_checkout "$VENV" "build/$NAME" "$CALLSITE_LOGS/build-$NAME.log" ||
  die "building callsite failed (log: build/logs/build-$NAME.log)"
log "Python $MINOR: ready in $((SECONDS - t0)) s ($VENV)"

cd /  # import the installed package, not the source tree
exec env -u PYTHONPATH -u CALLSITE_MLIR "$VENV/bin/python" -m callsite demo "$@"
