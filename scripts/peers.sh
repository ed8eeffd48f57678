#!/usr/bin/env bash
# scripts/peers.sh — one isolated venv per real third-party peer (requirements/peers/NAME.txt,
# first line `# python: 3.X`), with callsite built in: <repo>/.venv/peer-NAME.
#
# Usage: scripts/peers.sh [NAME ...]   (default: every requirements/peers/*.txt)
#   CALLSITE_SETUP_RETRY=1   retry peers whose install failed before
#   CALLSITE_PEERS=0         do nothing (the peer tests then skip)
# The peer's dependencies (its file and requirements/test.txt) live in a cached venv (common.sh's
# callsite_cached_venv) that every checkout on the machine shares; .venv/peer-NAME is a
# hard-linked copy of it (callsite_linked_venv) holding this checkout's callsite.
# A failure is tolerated and its reason written to .venv/peer-NAME.failed (tests/support/peers.py
# skips with it). Exits 0 unless the arguments are bad.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "${CALLSITE_PEERS:-1}" != 0 ] || { log "CALLSITE_PEERS=0: no peer venvs"; exit 0; }

mkdir -p "$CALLSITE_LOGS" "$CALLSITE_ROOT/.venv"

# fail NAME REASON : records why peer NAME is missing.
fail() {
  rm -rf "$CALLSITE_ROOT/.venv/peer-$1"
  echo "$2" >"$CALLSITE_ROOT/.venv/peer-$1.failed"
  log "peer $1 not installed: $2"
}

setup_peer() {
  local name="$1" minor base deps venv="$CALLSITE_ROOT/.venv/peer-$1" logf="$CALLSITE_LOGS/build-peer-$1.log"
  local failed="$CALLSITE_ROOT/.venv/peer-$1.failed"
  if [ -f "$failed" ] && [ "${CALLSITE_SETUP_RETRY:-0}" != 1 ]; then
    log "peer $name not installed: $(cat "$failed") (earlier attempt; CALLSITE_SETUP_RETRY=1 retries)"
    return 0
  fi
  minor="$(sed -n '1s/^#[[:space:]]*python:[[:space:]]*\(3\.[0-9]*\).*/\1/p' "$CALLSITE_REQUIREMENTS/peers/$name.txt")"
  [ -n "$minor" ] || { fail "$name" "requirements/peers/$name.txt lacks its first line '# python: 3.X'"; return 0; }
  base="$(callsite_find_python "$minor")" || { fail "$name" "Python $minor: $base"; return 0; }
  deps="$(callsite_cached_venv "peer-$name" "$base" callsite_pip_install "$CALLSITE_REQUIREMENTS/test.txt" \
    "$CALLSITE_REQUIREMENTS/peers/$name.txt")" ||
    { fail "$name" "$(callsite_pip_error <"$CALLSITE_LOGS/pip-peer-$name.log") (see build/logs/pip-peer-$name.log)"; return 0; }
  callsite_linked_venv "$deps" "$venv" || { fail "$name" "could not copy $deps"; return 0; }
  local wheel; wheel="$(callsite_wheel "$minor")" ||
    { fail "$name" "callsite did not build for Python $minor (see build/logs/build-py$minor.log)"; return 0; }
  if "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps --force-reinstall \
       "$wheel" >"$logf" 2>&1 && (cd / && "$venv/bin/python" -c 'import callsite') >>"$logf" 2>&1; then
    rm -f "$failed"
    log "peer $name: ready"
  else
    fail "$name" "callsite did not install or import in the $name venv (see ${logf#"$CALLSITE_ROOT"/})"
  fi
}

# callsite_wheel MINOR : prints this checkout's callsite wheel for MINOR, the one scripts/setup.sh
# built for the test venv of that version (running setup.sh MINOR first when there is none).
callsite_wheel() {
  local wheels="$CALLSITE_ROOT/build/wheels/py$1"
  compgen -G "$wheels/callsite-*.whl" >/dev/null || {
    log "peers: no callsite wheel for Python $1 yet: scripts/setup.sh $1"
    "$CALLSITE_ROOT/scripts/setup.sh" "$1" >&2 || return 1
  }
  compgen -G "$wheels/callsite-*.whl" | head -n 1 | grep .
}

NAMES=("$@")
if [ ${#NAMES[@]} = 0 ]; then
  for f in "$CALLSITE_REQUIREMENTS"/peers/*.txt; do [ -f "$f" ] && NAMES+=("$(basename "$f" .txt)"); done
fi
for name in "${NAMES[@]}"; do
  [ -f "$CALLSITE_REQUIREMENTS/peers/$name.txt" ] || die "no requirements/peers/$name.txt"
  setup_peer "$name"
done
