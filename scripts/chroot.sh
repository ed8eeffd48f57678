#!/usr/bin/env bash
# scripts/chroot.sh — the CPython versions the host cannot run (common.sh's CALLSITE_CHROOT_MINORS:
# Debian sid builds needing a newer glibc than the host's), tested inside a cached Debian sid chroot
# with the same scripts as the host: setup.sh makes the venvs, pytest.sh runs the suite.
#
# Usage:
#   scripts/chroot.sh wanted [3.X ...]      which requested versions (default: all) are the chroot's
#                                           to test: the chroot's minors pyenv does not have
#   scripts/chroot.sh test RESULTS [3.X ...] builds the chroot unless a cached one matches, then
#                                           scripts/setup.sh + pytest.sh: RESULTS/pytest-py3.X.*
#                                           (default: the wanted ones); no chroot: a skip, in CI a failure
#   scripts/chroot.sh run 3.14 CMD ...      runs CMD in the chroot's copy of the repo, in that
#                                           version's venv
# The chroot lives in $CALLSITE_CACHE/sid-KEY (KEY: a hash of its package list); inside it the
# venvs' dependencies are cached the way setup.sh caches them on the host, so a second run, from
# any checkout, reuses both. The mirror is the host's Debian mirror, read from its apt
# configuration at run time.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CHROOT_PACKAGES=()
for m in "${CALLSITE_CHROOT_MINORS[@]}"; do CHROOT_PACKAGES+=("python$m-dev" "python$m-venv"); done
CHROOT_PACKAGES+=(g++ cmake ninja-build git ca-certificates googletest libgtest-dev)
CHROOT_KEY="$(printf '%s\n' sid apt "${CHROOT_PACKAGES[@]}" | sha256sum | cut -c1-12)"
CHROOT_DIR="$CALLSITE_CACHE/sid-$CHROOT_KEY"
IN_ROOT=/opt/callsite          # inside the chroot: the caches, and src-*/ (repo copies)
# One repo copy (with its build trees and venvs) per checkout: two checkouts sharing one build
# tree would mix objects, since the copy keeps each checkout's modification times and an older
# source file does not make ninja rebuild a newer object built from another checkout.
SRC_IN="$IN_ROOT/src-$(cd "$CALLSITE_ROOT" && pwd -P | sha256sum | cut -c1-12)"

# The host's main Debian archive (not its security archive), whatever the sources' format.
host_mirror() {
  apt-get indextargets --format '$(REPO_URI) $(LABEL)' 2>/dev/null | awk '$2 == "Debian" { print $1; exit }' | grep .
}

cmd_wanted() {
  local m
  for m in "${CALLSITE_CHROOT_MINORS[@]}"; do
    if [ $# -gt 0 ] && [[ " $* " != *" $m "* ]]; then continue; fi
    callsite_skip_reason "$m" >/dev/null || continue # pyenv has it: tested on the host
    echo "$m"
  done
}

cmd_check() {
  [ "$(id -u)" = 0 ] || { echo "needs root (chroot, mounts)"; return 1; }
  [ -f "$CHROOT_DIR/.callsite-ready" ] && return 0
  host_mirror >/dev/null || { echo "no Debian mirror in the host's apt configuration"; return 1; }
  command -v mmdebstrap >/dev/null 2>&1 && return 0
  mkdir -p "$CALLSITE_LOGS"
  callsite_install_packages mmdebstrap >"$CALLSITE_LOGS/apt-mmdebstrap.log" 2>&1 ||
    { echo "mmdebstrap is not installed and apt-get could not install it (build/logs/apt-mmdebstrap.log)"; return 1; }
}

cmd_ensure() {
  local why; why="$(cmd_check)" || die "chroot unavailable: $why"
  if [ -f "$CHROOT_DIR/.callsite-ready" ]; then log "chroot: reusing $CHROOT_DIR"; return 0; fi
  local mirror t0=$SECONDS tmp="$CHROOT_DIR.partial"; mirror="$(host_mirror)"
  mkdir -p "$CALLSITE_LOGS"; rm -rf "$tmp"
  log "chroot: building Debian sid in $CHROOT_DIR from $mirror (log: build/logs/chroot.log)"
  # The mirror may serve sid with an expired Release date: don't reject it for that.
  if ! mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
       --include="$(IFS=,; echo "${CHROOT_PACKAGES[*]}")" sid "$tmp" "deb $mirror sid main" \
       >"$CALLSITE_LOGS/chroot.log" 2>&1; then
    tail -n 20 "$CALLSITE_LOGS/chroot.log" >&2; rm -rf "$tmp"
    die "mmdebstrap failed"
  fi
  touch "$tmp/.callsite-ready"
  mv "$tmp" "$CHROOT_DIR"
  log "chroot: built in $((SECONDS - t0)) s"
}

# Local directories the host's pip configuration points at (find-links, file:// indexes): bound
# read-only at the same place in the chroot so pip there sees what pip here sees.
pip_local_dirs() {
  { cat /etc/pip.conf /etc/xdg/pip/pip.conf "$HOME/.pip/pip.conf" "$HOME/.config/pip/pip.conf" 2>/dev/null
    printf '%s\n' "${PIP_FIND_LINKS:-}"; } | tr ' =' '\n\n' | sed -n 's,^file://,,; \,^/,p' |
    while read -r d; do [ -d "$d" ] && echo "$d"; done | sort -u
}

bind() { # bind SRC DST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2" || return 1
  [ "${3:-}" != ro ] || mount -o remount,bind,ro "$2"
}

# Refreshes the repo copy, mounts /proc, /dev, the host's local pip directories and this
# checkout's build/logs (so the logs are where the host's are); copies resolver, CA bundle and
# pip configuration in. The mounts go with the mount namespace of their own (below).
enter() {
  local src="$CHROOT_DIR$SRC_IN" d
  mkdir -p "$src" "$CALLSITE_LOGS"
  # tar keeps modification times, so the incremental builds (build/) and the venvs (.venv/),
  # which stay, see only what changed.
  find "$src" -mindepth 1 -maxdepth 1 ! -name build ! -name .venv -exec rm -rf {} +
  (cd "$CALLSITE_ROOT" && tar -c --exclude=./.venv --exclude=./build --exclude=./.git .) | tar -x -C "$src"
  bind /proc "$CHROOT_DIR/proc" && bind /dev "$CHROOT_DIR/dev" && bind "$CALLSITE_LOGS" "$src/build/logs" ||
    die "cannot bind-mount /proc, /dev, build/logs"
  while read -r d; do [ -n "$d" ] && bind "$d" "$CHROOT_DIR$d" ro; done < <(pip_local_dirs)
  cp -L /etc/resolv.conf "$CHROOT_DIR/etc/resolv.conf" 2>/dev/null || true
  cp -L /etc/ssl/certs/ca-certificates.crt "$CHROOT_DIR/etc/ssl/certs/host-ca-certificates.crt"
  [ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$CHROOT_DIR/etc/pip.conf"
  [ ! -d /etc/xdg/pip ] || { mkdir -p "$CHROOT_DIR/etc/xdg"; cp -r /etc/xdg/pip "$CHROOT_DIR/etc/xdg/"; }
}

# in_chroot CMD... : runs CMD inside the chroot with a clean environment, but for the host's
# settings below that are set.
in_chroot() {
  local v pass=()
  for v in PIP_FIND_LINKS CALLSITE_SETUP_RETRY CALLSITE_TEST_TIMEOUT CALLSITE_PYTEST_ARGS CALLSITE_PEER_SUITES; do
    [ -z "${!v:-}" ] || pass+=("$v=${!v}")
  done
  chroot "$CHROOT_DIR" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
    PIP_CERT=/etc/ssl/certs/host-ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-180}" CALLSITE_CACHE="$IN_ROOT" "${pass[@]}" "$@"
}

# setup_in MINOR : setup.sh in the chroot. The DSLs publish no wheels for these versions, and
# the chroot carries its own system packages.
setup_in() { in_chroot CALLSITE_SYSTEM_PACKAGES=0 CALLSITE_DSLS=0 bash "$SRC_IN/scripts/setup.sh" "$1"; }

cmd_test() {
  local results="$1" m rc=0 why; shift
  [ $# -gt 0 ] || set -- $(cmd_wanted)
  mkdir -p "$results"
  # A missing chroot fails in CI, where these versions would otherwise go untested unseen; on a
  # developer's machine it is a skip with its reason.
  if ! why="$(cmd_check)"; then
    log "chroot unavailable: $why"
    for m in "$@"; do echo "chroot unavailable: $why" >"$results/pytest-py$m.skipped"; done
    [ -z "${CI:-}" ]; return
  fi
  (cmd_ensure) || return 1
  enter
  bind "$results" "$CHROOT_DIR$SRC_IN/build/test-results" || die "cannot bind-mount $results"
  for m in "$@"; do
    setup_in "$m" || { log "Python $m (chroot): setup failed (build/logs/build-py$m.log)"; rc=1; continue; }
    log "=== Python $m (chroot): pytest"
    # CALLSITE_EXAMPLES: the demo tests find examples/ beside a venv in the checkout.
    in_chroot CALLSITE_EXAMPLES="$SRC_IN/examples" bash "$SRC_IN/scripts/pytest.sh" \
      "$SRC_IN/build/test-results/pytest-py$m" "$SRC_IN/.venv/py$m/bin/python" || rc=1
  done
  return $rc
}

cmd_run() {
  local m="$1"; shift
  cmd_ensure; enter
  setup_in "$m" || die "setup failed for $m"
  in_chroot sh -c 'cd "$0" && PATH="$1/bin:$PATH" && shift && exec "$@"' "$SRC_IN" "$SRC_IN/.venv/py$m" "$@"
}

# One user of the chroot at a time: they share its mounts.
lock_chroot() {
  mkdir -p "$CALLSITE_CACHE" || die "cannot create $CALLSITE_CACHE"
  exec 9>"$CALLSITE_CACHE/.lock"
  flock -w 3600 9 || die "chroot: another scripts/chroot.sh still holds $CALLSITE_CACHE/.lock"
}

# test and run work in a mount namespace of their own: their mounts go when they end, however.
if [[ "${1:-}" =~ ^(test|run)$ ]] && [ -z "${CALLSITE_CHROOT_NS:-}" ] && [ "$(id -u)" = 0 ]; then
  CALLSITE_CHROOT_NS=1 exec unshare --mount "$BASH" "$0" "$@"
fi
case "${1:-}" in
  wanted) shift; cmd_wanted "$@" ;;
  test) shift; lock_chroot; cmd_test "$@" ;;
  run) shift; lock_chroot; cmd_run "$@" ;;
  *) callsite_usage; exit 2 ;;
esac
