#!/usr/bin/env bash
# scripts/peers.sh — one isolated venv per real third-party peer (requirements/peers/NAME.txt,
# first line `# python: 3.X`), with callsite built in: <repo>/.venv/peer-NAME.
#
# Usage: scripts/peers.sh [NAME ...]   (default: every requirements/peers/*.txt)
#   CALLSITE_SETUP_RETRY=1   retry peers whose install failed before
#   CALLSITE_PEERS=0         do nothing (the peer tests then skip)
# The peer's dependencies live in a venv under $CALLSITE_CACHE/venv/, keyed by a hash of the peer's
# file, requirements/test.txt and the interpreter's version, so every checkout on the machine (a CI
# clone too) shares them; .venv/peer-NAME is a thin venv of this checkout that adds the cached
# site-packages (a .pth) and holds this checkout's callsite. A failure is tolerated and its reason
# written to .venv/peer-NAME.failed (tests/support/peers.py skips with it). Exits 0 unless the arguments are bad.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "${CALLSITE_PEERS:-1}" != 0 ] || { log "CALLSITE_PEERS=0: no peer venvs"; exit 0; }

LOGDIR="$CALLSITE_ROOT/build/logs"
mkdir -p "$LOGDIR" "$CALLSITE_ROOT/.venv"

# fail NAME REASON : records why peer NAME is missing.
fail() {
  rm -rf "$CALLSITE_ROOT/.venv/peer-$1"
  echo "$2" >"$CALLSITE_ROOT/.venv/peer-$1.failed"
  log "peer $1 not installed: $2"
}

# pip_reason LOG : the first ERROR line of a pip log.
pip_reason() {
  local r; r="$(grep -E '^ERROR' "$1" | head -n 1 | cut -c1-200)"
  echo "${r:-pip exited non-zero} (see ${1#$CALLSITE_ROOT/})"
}

# deps_venv NAME BASE : prints the cached dependency venv of peer NAME, creating it when new.
deps_venv() {
  local name="$1" base="$2" file="$CALLSITE_REQUIREMENTS/peers/$1.txt" full key dir logf
  full="$("$base" -c 'import sys; print(sys.version)')"
  key="$( { echo "$full"; cat "$CALLSITE_REQUIREMENTS/test.txt" "$file"; } | sha256sum | cut -c1-12)"
  dir="$CALLSITE_CACHE/venv/peer-$name-$key"
  logf="$LOGDIR/pip-peer-$name.log"
  mkdir -p "$CALLSITE_CACHE/venv" || return 1
  (
    flock 8
    [ -f "$dir/.callsite-ready" ] && exit 0
    local t0=$SECONDS
    log "peer $name: installing its requirements into $dir (log: ${logf#$CALLSITE_ROOT/})"
    rm -rf "$dir"
    { "$base" -m venv "$dir" &&
      "$dir/bin/python" -m pip install --disable-pip-version-check -q \
        -r "$CALLSITE_REQUIREMENTS/test.txt" -r "$file"; } >"$logf" 2>&1 || { rm -rf "$dir"; exit 1; }
    touch "$dir/.callsite-ready"
    log "peer $name: requirements installed in $((SECONDS - t0)) s"
  ) 8>"$CALLSITE_CACHE/venv/.lock-peer-$name-$key" || return 1
  echo "$dir"
}

setup_peer() {
  local name="$1" minor base deps thin="$CALLSITE_ROOT/.venv/peer-$1" logf="$LOGDIR/build-peer-$1.log"
  local failed="$CALLSITE_ROOT/.venv/peer-$1.failed"
  if [ -f "$failed" ] && [ "${CALLSITE_SETUP_RETRY:-0}" != 1 ]; then
    log "peer $name not installed: $(cat "$failed") (earlier attempt; CALLSITE_SETUP_RETRY=1 retries)"
    return 0
  fi
  minor="$(callsite_peer_minor "$name")"
  [ -n "$minor" ] || { fail "$name" "requirements/peers/$name.txt lacks its first line '# python: 3.X'"; return 0; }
  base="$(callsite_find_python "$minor")" || { fail "$name" "Python $minor: $base"; return 0; }
  deps="$(deps_venv "$name" "$base")" || { fail "$name" "$(pip_reason "$LOGDIR/pip-peer-$name.log")"; return 0; }
  local site; site="$("$deps/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [ "$(cat "$thin/.callsite-deps" 2>/dev/null)" != "$deps" ] || [ ! -x "$thin/bin/python" ]; then
    rm -rf "$thin"
    "$base" -m venv --without-pip "$thin" || { fail "$name" "venv creation failed"; return 0; }
    local own; own="$("$thin/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    # addsitedir (not a bare path line) so the cached site-packages' own .pth files run too.
    echo "import site; site.addsitedir('$site')" >"$own/callsite-peer-deps.pth"
    echo "$deps" >"$thin/.callsite-deps"
  fi
  local wheel; wheel="$(callsite_wheel "$minor")" ||
    { fail "$name" "callsite did not build for Python $minor (see build/logs/build-py$minor.log)"; return 0; }
  if "$thin/bin/python" -m pip install --disable-pip-version-check -q --no-deps --force-reinstall \
       "$wheel" >"$logf" 2>&1 && (cd / && "$thin/bin/python" -c 'import callsite') >>"$logf" 2>&1; then
    rm -f "$failed"
    log "peer $name: ready"
  else
    fail "$name" "callsite did not install or import in the $name venv (see ${logf#$CALLSITE_ROOT/})"
  fi
}

# callsite_wheel MINOR : prints this checkout's callsite wheel for MINOR, the one scripts/setup.sh
# built for the test venv of that version (running setup.sh MINOR first when there is none).
callsite_wheel() {
  local wheel; wheel="$(ls "$CALLSITE_ROOT/build/wheels/py$1"/callsite-*.whl 2>/dev/null | head -n 1)"
  if [ -z "$wheel" ]; then
    log "peers: no callsite wheel for Python $1 yet: scripts/setup.sh $1"
    "$CALLSITE_ROOT/scripts/setup.sh" "$1" >&2 || return 1
    wheel="$(ls "$CALLSITE_ROOT/build/wheels/py$1"/callsite-*.whl 2>/dev/null | head -n 1)"
  fi
  [ -n "$wheel" ] && echo "$wheel"
}

NAMES=("$@")
if [ ${#NAMES[@]} = 0 ]; then
  for f in "$CALLSITE_REQUIREMENTS"/peers/*.txt; do [ -f "$f" ] && NAMES+=("$(basename "$f" .txt)"); done
fi
for name in "${NAMES[@]}"; do
  [ -f "$CALLSITE_REQUIREMENTS/peers/$name.txt" ] || die "no requirements/peers/$name.txt"
  setup_peer "$name"
done
