#!/usr/bin/env bash
# scripts/chroot.sh — CPython versions the host cannot run (3.14, 3.15: Debian sid builds that
# need a newer glibc than the host's), tested inside a cached Debian sid chroot.
#
# Usage:
#   scripts/chroot.sh wanted [3.X ...]      which of the requested versions (default: all) are the
#                                           chroot's to test: 3.14, 3.15 unless pyenv has them
#   scripts/chroot.sh check                 prints why the chroot cannot be used (exit 1), or nothing
#   scripts/chroot.sh ensure                builds the chroot unless a cached one matches
#   scripts/chroot.sh setup 3.14 ...        ensure + venv per version (cached) + callsite built in
#   scripts/chroot.sh test RESULTS 3.14 ... setup + pytest; RESULTS/pytest-py3.X.{xml,log,rc,secs}
#   scripts/chroot.sh run 3.14 CMD ...      runs CMD in the chroot, in that version's venv, from
#                                           the chroot's copy of the repo
# Environment:
#   CALLSITE_CHROOT_CACHE   where chroots live (default /var/cache/callsite)
#   CALLSITE_PYTEST_ARGS, CALLSITE_TEST_TIMEOUT as for test.sh
#
# The chroot is keyed by a hash of its package list, each venv by the interpreter's version and
# its pip requirements, so a second run reuses both. The repo is copied into the chroot (build
# trees stay there), so host and chroot builds never share a build directory. The mirror is the
# one the host's apt configuration names, read at run time.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CHROOT_MINORS=(3.14 3.15)
CHROOT_PACKAGES=(python3.14-dev python3.14-venv python3.15-dev python3.15-venv g++ cmake
                 ninja-build git ca-certificates googletest libgtest-dev)
# pip requirements every venv needs; venv_deps adds the optional ones (tests skip without them).
CHROOT_CORE_DEPS=(nanobind scikit-build-core pytest cmake ninja coverage)
CHROOT_CACHE="${CALLSITE_CHROOT_CACHE:-/var/cache/callsite}"
CHROOT_KEY="$(printf '%s\n' sid apt "${CHROOT_PACKAGES[@]}" | sha256sum | cut -c1-12)"
CHROOT_DIR="$CHROOT_CACHE/sid-$CHROOT_KEY"
IN_ROOT=/opt/callsite          # inside the chroot: src-*/ (repo copies), venv/, results/
# One repo copy (with its build trees) per checkout: two checkouts sharing one build tree would
# mix objects, since the copy keeps each checkout's modification times and an older source file
# does not make ninja rebuild a newer object built from another checkout.
SRC_IN="$IN_ROOT/src-$(cd "$CALLSITE_ROOT" && pwd -P | sha256sum | cut -c1-12)"
TIMEOUT="${CALLSITE_TEST_TIMEOUT:-1200}"

# The first non-security Debian mirror in the host's apt sources (deb822 or one-line format).
host_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri="$(awk 'BEGIN{RS=""} /Types:[^\n]*deb/ && !/security/ {
                 if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { s = substr($0, RSTART, RLENGTH);
                   sub(/URIs:[ \t]*/, "", s); print s; exit } }' "$f")"
    [ -n "$uri" ] && { echo "$uri"; return 0; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri="$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' "$f")"
    [ -n "$uri" ] && { echo "$uri"; return 0; }
  done
  return 1
}

cmd_wanted() {
  local m
  for m in "${CHROOT_MINORS[@]}"; do
    if [ $# -gt 0 ] && [[ " $* " != *" $m "* ]]; then continue; fi
    callsite_skip_reason "$m" >/dev/null || continue # pyenv has it: tested on the host
    echo "$m"
  done
}

# Debian's mmdebstrap, installed from the host's own apt sources when missing.
install_mmdebstrap() {
  command -v mmdebstrap >/dev/null 2>&1 && return 0
  mkdir -p "$CALLSITE_ROOT/build/logs"
  log "installing mmdebstrap (log: build/logs/apt-mmdebstrap.log)"
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap; } \
    >"$CALLSITE_ROOT/build/logs/apt-mmdebstrap.log" 2>&1
  command -v mmdebstrap >/dev/null 2>&1
}

cmd_check() {
  [ "$(id -u)" = 0 ] || { echo "needs root (chroot, mounts)"; return 1; }
  if [ ! -f "$CHROOT_DIR/.callsite-ready" ]; then
    install_mmdebstrap ||
      { echo "mmdebstrap is not installed and apt-get could not install it (build/logs/apt-mmdebstrap.log)"; return 1; }
    host_mirror >/dev/null || { echo "no Debian mirror in the host's apt configuration"; return 1; }
  fi
  return 0
}

cmd_ensure() {
  local why; why="$(cmd_check)" || die "chroot unavailable: $why"
  if [ -f "$CHROOT_DIR/.callsite-ready" ]; then
    log "chroot: reusing $CHROOT_DIR"; return 0
  fi
  local mirror t0=$SECONDS tmp="$CHROOT_DIR.partial"; mirror="$(host_mirror)"
  mkdir -p "$CHROOT_CACHE" "$CALLSITE_ROOT/build/logs"
  rm -rf "$tmp"
  log "chroot: building Debian sid in $CHROOT_DIR from $mirror (log: build/logs/chroot.log)"
  # The mirror serves sid with an expired Release date: don't reject it for that.
  if ! mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
       --include="$(IFS=,; echo "${CHROOT_PACKAGES[*]}")" sid "$tmp" "deb $mirror sid main" \
       >"$CALLSITE_ROOT/build/logs/chroot.log" 2>&1; then
    tail -n 20 "$CALLSITE_ROOT/build/logs/chroot.log" >&2; rm -rf "$tmp"
    die "mmdebstrap failed"
  fi
  touch "$tmp/.callsite-ready"
  mv "$tmp" "$CHROOT_DIR"
  log "chroot: built in $((SECONDS - t0)) s"
}

# Local paths the host's pip configuration points at (find-links, file:// indexes): bound
# read-only at the same place in the chroot so pip there sees what pip here sees.
pip_local_dirs() {
  { cat /etc/pip.conf "$HOME/.pip/pip.conf" "$HOME/.config/pip/pip.conf" 2>/dev/null
    printf '%s\n' "${PIP_FIND_LINKS:-}"; } | tr ' =' '\n\n' | sed -n 's,^file://,,; \,^/,p' |
    while read -r d; do [ -d "$d" ] && echo "$d"; done | sort -u
}

MOUNTED=()
unmount_all() {
  local i
  for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTED[$i]}" 2>/dev/null; done
  MOUNTED=()
}
bind() { # bind SRC DST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2" || return 1
  MOUNTED+=("$2")
  [ "${3:-}" != ro ] || mount -o remount,bind,ro "$2"
}

# Mounts /proc, /dev and the host's local pip directories; copies resolver, CA bundle and pip
# configuration in; refreshes the repo copy. Unmounted by the EXIT trap.
enter() {
  mkdir -p "$CALLSITE_ROOT/build/logs"
  trap unmount_all EXIT
  trap 'exit 130' INT TERM # the EXIT trap then unmounts
  bind /proc "$CHROOT_DIR/proc" && bind /dev "$CHROOT_DIR/dev" || die "cannot bind-mount /proc, /dev"
  local d
  while read -r d; do [ -n "$d" ] && bind "$d" "$CHROOT_DIR$d" ro; done < <(pip_local_dirs)
  cp -L /etc/resolv.conf "$CHROOT_DIR/etc/resolv.conf" 2>/dev/null || true
  cp -L /etc/ssl/certs/ca-certificates.crt "$CHROOT_DIR/etc/ssl/certs/host-ca-certificates.crt"
  [ -f /etc/pip.conf ] && cp /etc/pip.conf "$CHROOT_DIR/etc/pip.conf"
  # The repo copy: tar keeps modification times, so the chroot's incremental builds (kept in
  # src/build/, which is not replaced) rebuild only what changed.
  local src="$CHROOT_DIR$SRC_IN"
  mkdir -p "$src"
  find "$src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
  (cd "$CALLSITE_ROOT" && tar -c --exclude=./.venv --exclude=./build --exclude=./.git .) | tar -x -C "$src"
}

# in_chroot CMD... : runs CMD inside the chroot with a clean environment.
in_chroot() {
  chroot "$CHROOT_DIR" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
    PIP_CERT=/etc/ssl/certs/host-ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-180}" ${PIP_FIND_LINKS:+PIP_FIND_LINKS="$PIP_FIND_LINKS"} \
    "$@"
}

venv_deps() { # venv_deps MINOR -> the pip requirement lines for that venv
  # iree and jaxlib: the MLIR oracle tests compare with their bindings, the benchmark with jaxlib;
  # the rest as scripts/setup.sh installs them (each test skips with the reason without its peer).
  printf '%s\n' "${CHROOT_CORE_DEPS[@]}" iree-base-compiler jaxlib mypy filecheck \
    hypothesis greenlet py-spy
}

# venv_for MINOR : prints the venv path (inside the chroot), creating it when its key is new.
# The key is the interpreter's full version plus the requirement list.
venv_for() {
  local m="$1" full key v
  full="$(in_chroot "/usr/bin/python$m" -c 'import sys; print(sys.version)')" || return 1
  key="$( { echo "$full"; venv_deps "$m"; } | sha256sum | cut -c1-12)"
  v="$IN_ROOT/venv/py$m-$key"
  if [ ! -f "$CHROOT_DIR$v/.callsite-ready" ]; then
    local t0=$SECONDS logf="$CALLSITE_ROOT/build/logs/chroot-pip-py$m.log"
    log "chroot: creating venv $v (log: ${logf#$CALLSITE_ROOT/})"
    rm -rf "$CHROOT_DIR$v"
    { in_chroot "/usr/bin/python$m" -m venv "$v" &&
      in_chroot "$v/bin/python" -m pip install -q "${CHROOT_CORE_DEPS[@]}"; } >"$logf" 2>&1 ||
      { tail -n 20 "$logf" >&2; return 1; }
    local opt
    for opt in $(venv_deps "$m" | tail -n +$((${#CHROOT_CORE_DEPS[@]} + 1))); do
      in_chroot "$v/bin/python" -m pip install -q "$opt" >>"$logf" 2>&1 ||
        log "chroot: optional $opt did not install on $m (see ${logf#$CALLSITE_ROOT/})"
    done
    touch "$CHROOT_DIR$v/.callsite-ready"
    log "chroot: venv for $m ready in $((SECONDS - t0)) s"
  fi
  # Each version's venv of an older key is stale: drop it.
  find "$CHROOT_DIR$IN_ROOT/venv" -mindepth 1 -maxdepth 1 -name "py$m-*" ! -name "py$m-$key" \
    -exec rm -rf {} + 2>/dev/null
  echo "$v"
}

# build_into VENV MINOR : builds and installs callsite from the repo copy (incremental).
build_into() {
  local v="$1" m="$2" t0=$SECONDS logf="$CALLSITE_ROOT/build/logs/build-py$m.log"
  log "chroot: building callsite for Python $m (log: ${logf#$CALLSITE_ROOT/})"
  if in_chroot env CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$v/bin/python" -m pip install \
       --no-build-isolation --no-deps -v -C cmake.define.CALLSITE_TESTING=ON "$SRC_IN" >"$logf" 2>&1 &&
     in_chroot sh -c "cd / && '$v/bin/python' -c 'import callsite'" >>"$logf" 2>&1; then
    log "chroot: callsite built for Python $m in $((SECONDS - t0)) s"
  else
    tail -n 40 "$logf" >&2; return 1
  fi
}

cmd_setup() {
  cmd_ensure; enter
  local m v rc=0
  for m in "$@"; do
    v="$(venv_for "$m")" && build_into "$v" "$m" || rc=1
  done
  return $rc
}

cmd_test() {
  local results="$1" m; shift
  mkdir -p "$results"
  if ! (cmd_ensure); then
    for m in "$@"; do echo setup >"$results/pytest-py$m.rc"; done
    return 1
  fi
  enter
  mkdir -p "$results" "$CHROOT_DIR$IN_ROOT/results"
  local v t0
  for m in "$@"; do
    t0=$SECONDS
    if ! { v="$(venv_for "$m")" && build_into "$v" "$m"; }; then
      echo setup >"$results/pytest-py$m.rc"; continue
    fi
    log "=== Python $m (chroot): pytest"
    rm -f "$CHROOT_DIR$IN_ROOT/results/pytest-py$m.xml"
    # shellcheck disable=SC2086
    # CALLSITE_EXAMPLES: the demo tests find examples/ beside a venv in the checkout; these
    # venvs live outside the repo copy.
    in_chroot CALLSITE_EXAMPLES="$SRC_IN/examples" timeout "$TIMEOUT" "$v/bin/python" -m pytest "$SRC_IN/tests" -q -p no:cacheprovider \
      -o faulthandler_timeout=600 --junitxml="$IN_ROOT/results/pytest-py$m.xml" ${CALLSITE_PYTEST_ARGS:-} \
      2>&1 | tee "$results/pytest-py$m.log"
    echo "${PIPESTATUS[0]}" >"$results/pytest-py$m.rc"
    cp "$CHROOT_DIR$IN_ROOT/results/pytest-py$m.xml" "$results/" 2>/dev/null
    echo $((SECONDS - t0)) >"$results/pytest-py$m.secs"
  done
}

cmd_run() {
  local m="$1" v; shift
  cmd_ensure; enter
  v="$(venv_for "$m")" && build_into "$v" "$m" || die "setup failed for $m"
  in_chroot sh -c 'cd "$0" && PATH="$1/bin:$PATH" && shift && exec "$@"' "$SRC_IN" "$v" "$@"
}

# One user of the chroot at a time: they share its mounts, repo copy and build trees.
lock_chroot() {
  mkdir -p "$CHROOT_CACHE" || die "cannot create $CHROOT_CACHE"
  exec 9>"$CHROOT_CACHE/.lock"
  flock -w 3600 9 || die "chroot: another scripts/chroot.sh still holds $CHROOT_CACHE/.lock"
}

case "${1:-}" in
  ensure | setup | test | run) lock_chroot ;;
esac
case "${1:-}" in
  wanted) shift; cmd_wanted "$@" ;;
  check) shift; cmd_check ;;
  ensure) shift; cmd_ensure ;;
  setup) shift; cmd_setup "${@:-${CHROOT_MINORS[@]}}" ;;
  test) shift; cmd_test "$@" ;;
  run) shift; cmd_run "$@" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
