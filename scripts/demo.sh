#!/usr/bin/env bash
# scripts/demo.sh — sets up the demo's own small venv and runs `python -m callsite demo`: MLIR's
# own traceback switch against callsite's on the same program, a small DSL building real MLIR
# with source locations, and native frames of a C++ interpreter.
#
# Usage: scripts/demo.sh [SECTION ...]       (sections: python -m callsite demo --help)
#   CALLSITE_DEMO_PYTHON=3.X   the interpreter (default: 3.12, else 3.13, 3.11, 3.10: the first
#                              found; on 3.12+ iree's wheels are stable-ABI, where MLIR's own
#                              switch records no frame and callsite still gives the user's lines)
# Only requirements/demo.txt is installed (callsite's build tools and iree-base-compiler), once
# per key (the interpreter, that file's text) into $CALLSITE_CACHE/venv/demo-py3.X-KEY;
# .venv/demo-py3.X is a hard-linked copy of it, into which callsite is built (build dir
# build/demo-py3.X, compiler cache shared with the test builds) and installed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"
REQS="$CALLSITE_REQUIREMENTS/demo.txt"
LOGDIR="$CALLSITE_ROOT/build/logs"
mkdir -p "$LOGDIR"

MINOR="${CALLSITE_DEMO_PYTHON:-}"
if [ -z "$MINOR" ]; then
  for m in 3.12 3.13 3.11 3.10; do
    if ! callsite_skip_reason "$m" >/dev/null; then MINOR="$m"; break; fi
  done
  [ -n "$MINOR" ] || die "no usable Python among 3.12 3.13 3.11 3.10 (the demo needs one on PATH or under pyenv)"
elif why="$(callsite_skip_reason "$MINOR")"; then
  die "CALLSITE_DEMO_PYTHON=$MINOR: $why"
fi
BASE="$(callsite_find_python "$MINOR")"
NAME="demo-py$MINOR"
VENV="$CALLSITE_ROOT/.venv/$NAME"
t0=$SECONDS

# --- the cached requirements venv -------------------------------------------------------------
key="$( { "$BASE" -c 'import sys; print(sys.executable, sys.version)'; cat "$REQS"; } | sha256sum | cut -c1-12)"
DEPS="$CALLSITE_CACHE/venv/$NAME-$key"
mkdir -p "$CALLSITE_CACHE/venv"
(
  flock 8
  [ -f "$DEPS/.callsite-ready" ] && exit 0
  log "Python $MINOR: installing requirements/demo.txt into $DEPS (log: build/logs/pip-$NAME.log)"
  rm -rf "$DEPS"
  "$BASE" -m venv "$DEPS" >&2 || exit 1
  mapfile -t required < <(callsite_requirements "$REQS")
  if ! "$DEPS/bin/python" -m pip install --disable-pip-version-check -q "${required[@]}" \
      >"$LOGDIR/pip-$NAME.log" 2>&1 </dev/null; then
    log "  FAILED: pip install ${required[*]}"; tail -n 20 "$LOGDIR/pip-$NAME.log" >&2
    rm -rf "$DEPS"; exit 1
  fi
  touch "$DEPS/.callsite-ready"
) 8>"$CALLSITE_CACHE/venv/.lock-$NAME-$key" || die "the demo's set-up failed"
# Keys nobody has used for a week belong to old requirement files.
find "$CALLSITE_CACHE/venv" -mindepth 1 -maxdepth 1 -name "$NAME-*" ! -name "$NAME-$key" \
  -mtime +7 -exec rm -rf {} + 2>/dev/null || true
touch "$DEPS"

# --- .venv/demo-py3.X: a hard-linked copy, so that installing callsite leaves the cache as it is
if [ "$(cat "$VENV/.callsite-deps" 2>/dev/null)" != "$DEPS" ] || ! "$VENV/bin/python" -c '' 2>/dev/null; then
  log "Python $MINOR: $VENV from $DEPS"
  rm -rf "$VENV" "$VENV.partial"; mkdir -p "$(dirname "$VENV")"
  cp -al "$DEPS" "$VENV.partial" 2>/dev/null || cp -a "$DEPS" "$VENV.partial"
  # sed -i writes new files: the cache's copies of these scripts keep their own paths.
  grep -lIF --null "$DEPS" "$VENV.partial"/bin/* "$VENV.partial/pyvenv.cfg" 2>/dev/null |
    xargs -0 -r sed -i "s|$DEPS|$VENV|g"
  rm -f "$VENV.partial/.callsite-ready"
  echo "$DEPS" >"$VENV.partial/.callsite-deps"
  mv "$VENV.partial" "$VENV"
fi

# --- callsite, built from this checkout -------------------------------------------------------
log "Python $MINOR: building callsite into $VENV (log: build/logs/build-$NAME.log)"
if ! CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-build-isolation --no-deps \
    --force-reinstall -C "build-dir=build/$NAME" . >"$LOGDIR/build-$NAME.log" 2>&1 </dev/null; then
  tail -n 40 "$LOGDIR/build-$NAME.log" >&2
  die "building callsite failed (log: build/logs/build-$NAME.log)"
fi
log "Python $MINOR: ready in $((SECONDS - t0)) s ($VENV)"

cd /  # import the installed package, not the source tree
exec env -u PYTHONPATH -u CALLSITE_MLIR "$VENV/bin/python" -m callsite demo "$@"
