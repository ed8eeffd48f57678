#!/usr/bin/env bash
# scripts/setup.sh — idempotent set-up: system packages, one venv per Python with the test
# requirements, callsite built (a wheel in build/wheels/py3.X) and installed in it.
#
# Usage: scripts/setup.sh [--bench] [--dsls] [3.10 3.11 ...]   (default: every host Python)
#   requirements/test.txt (required) and test-optional.txt (each line tolerated: its tests skip)
#   --bench / CALLSITE_BENCH=1   also requirements/bench.txt (each line tolerated)
#   --dsls / CALLSITE_DSLS=1     also requirements/dsls.txt (each line tolerated)
#   CALLSITE_SETUP_RETRY=1       retry the tolerated lines that failed before
#   CALLSITE_SYSTEM_PACKAGES=0   do not check/install the Debian packages (the chroot has them)
# The dependencies are installed once per key (the interpreter, the requirement files' text) into
# $CALLSITE_CACHE/venv/py3.X-KEY; .venv/py3.X is a hard-linked copy of it, so every checkout
# (a CI clone too) gets its venv in seconds. callsite itself is rebuilt on every run
# (incremental: scikit-build-core keeps build/{wheel_tag}-<environment>, one folder per venv,
# backend/callsite_build_backend.py). Exits non-zero if a required step
# failed for any requested, available Python.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BENCH="${CALLSITE_BENCH:-0}"
DSLS="${CALLSITE_DSLS:-0}"
MINORS=()
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    --dsls) DSLS=1 ;;
    3.*) MINORS+=("$arg") ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

LOGDIR="$CALLSITE_ROOT/build/logs"
mkdir -p "$LOGDIR"

# --- system packages (only when missing) ------------------------------------------------------
if [ "${CALLSITE_SYSTEM_PACKAGES:-1}" != 0 ]; then
  apt_missing=()
  for p in googletest libgtest-dev valgrind ccache; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || apt_missing+=("$p")
  done
  if [ ${#apt_missing[@]} -gt 0 ]; then
    log "installing system packages: ${apt_missing[*]}"
    if ! callsite_install_packages "${apt_missing[@]}" >"$LOGDIR/apt.log" 2>&1; then
      log "WARNING: apt-get install failed (see $LOGDIR/apt.log); C++ tests will not build"
    fi
  fi
fi

# --- the cached dependency venvs --------------------------------------------------------------
# requirement_name LINE : the distribution a requirement line names (its failure record's name).
requirement_name() { sed -E 's/^[[:space:]]*([A-Za-z0-9._-]+).*/\1/' <<<"$1"; }

# install_optional PY LINE : pip-installs one tolerated line; a failure is recorded beside the
# venv (.callsite-failed-NAME, the first pip error) and reported.
install_optional() {
  local py="$1" req="$2" venv name logf
  venv="$(dirname "$(dirname "$py")")"; name="$(requirement_name "$req")"
  logf="$LOGDIR/pip-$(basename "$venv")-$name.log"
  if "$py" -m pip install --disable-pip-version-check -q "$req" >"$logf" 2>&1 </dev/null; then
    rm -f "$venv/.callsite-failed-$name"; return 0
  fi
  local reason; reason="$(grep -E '^ERROR' "$logf" | head -n 1 | cut -c1-200)"
  echo "${reason:-pip exited non-zero (see $logf)}" >"$venv/.callsite-failed-$name"
  log "  optional $name not installed: $(cat "$venv/.callsite-failed-$name") (log: $logf)"
}

# deps_venv MINOR BASE : prints the cached venv holding MINOR's requirements, creating it when
# its key is new. One creator at a time per key (flock); a half-made venv is never marked ready.
deps_venv() {
  local minor="$1" base="$2" files=("$CALLSITE_REQUIREMENTS/test.txt" "$CALLSITE_REQUIREMENTS/test-optional.txt")
  [ "$DSLS" = 1 ] && files+=("$CALLSITE_REQUIREMENTS/dsls.txt")
  [ "$BENCH" = 1 ] && files+=("$CALLSITE_REQUIREMENTS/bench.txt")
  local key dir
  key="$( { "$base" -c 'import sys; print(sys.executable, sys.version)'; cat "${files[@]}"; } | sha256sum | cut -c1-12)"
  dir="$CALLSITE_CACHE/venv/py$minor-$key"
  mkdir -p "$CALLSITE_CACHE/venv"
  (
    flock 8
    if [ -f "$dir/.callsite-ready" ]; then
      [ "${CALLSITE_SETUP_RETRY:-0}" = 1 ] || exit 0
      local f; for f in "$dir"/.callsite-failed-*; do
        [ -f "$f" ] || continue
        log "  retrying ${f##*/.callsite-failed-} in $dir"
        grep -hE "^[[:space:]]*${f##*/.callsite-failed-}([^A-Za-z0-9._-]|$)" "${files[@]}" |
          while read -r req; do install_optional "$dir/bin/python" "$req"; done
      done
      exit 0
    fi
    local t0=$SECONDS req
    log "Python $minor: installing the requirements into $dir (log: build/logs/pip-${dir##*/}-*.log)"
    rm -rf "$dir"
    "$base" -m venv "$dir" >&2 || exit 1
    local required; mapfile -t required < <(callsite_requirements "$CALLSITE_REQUIREMENTS/test.txt")
    if ! "$dir/bin/python" -m pip install --disable-pip-version-check -q "${required[@]}" \
        >"$LOGDIR/pip-${dir##*/}-required.log" 2>&1; then
      log "  FAILED: pip install ${required[*]}"; tail -n 20 "$LOGDIR/pip-${dir##*/}-required.log" >&2
      rm -rf "$dir"; exit 1
    fi
    while read -r req; do install_optional "$dir/bin/python" "$req"; done \
      < <(callsite_requirements "${files[@]:1}")
    touch "$dir/.callsite-ready"
    log "  requirements installed in $((SECONDS - t0)) s"
  ) 8>"$CALLSITE_CACHE/venv/.lock-py$minor-$key" || return 1
  # Keys nobody has used for a week belong to old requirement files.
  find "$CALLSITE_CACHE/venv" -mindepth 1 -maxdepth 1 -name "py$minor-*" ! -name "py$minor-$key" \
    -mtime +7 -exec rm -rf {} + 2>/dev/null || true
  touch "$dir"
  echo "$dir"
}

# clone_venv SRC DST : DST becomes a copy of venv SRC whose files are hard links into SRC. The
# scripts naming SRC's path (bin/ shebangs, activate, pyvenv.cfg) are rewritten by sed -i, which
# writes a new file, so SRC's own copies stay as they are; pip and Python's bytecode writes also
# replace files rather than write into them.
clone_venv() {
  local src="$1" dst="$2"
  rm -rf "$dst" "$dst.partial"; mkdir -p "$(dirname "$dst")"
  cp -al "$src" "$dst.partial" 2>/dev/null || cp -a "$src" "$dst.partial" || return 1
  grep -lIF --null "$src" "$dst.partial"/bin/* "$dst.partial/pyvenv.cfg" 2>/dev/null |
    xargs -0 -r sed -i "s|$src|$dst|g"
  rm -f "$dst.partial/.callsite-ready"
  echo "$src" >"$dst.partial/.callsite-deps"
  mv "$dst.partial" "$dst"
}

setup_one() {
  local minor="$1" base="$2" venv deps
  venv="$(callsite_venv "$minor")"
  deps="$(deps_venv "$minor" "$base")" || return 1
  if [ "$(cat "$venv/.callsite-deps" 2>/dev/null)" != "$deps" ] || ! "$venv/bin/python" -c '' 2>/dev/null ||
     [ "${CALLSITE_SETUP_RETRY:-0}" = 1 ]; then
    log "Python $minor: $venv from $deps"
    clone_venv "$deps" "$venv" || return 1
  else
    log "Python $minor: using $venv"
  fi
  local wheels="$CALLSITE_ROOT/build/wheels/py$minor" logf="$LOGDIR/build-py$minor.log" t0=$SECONDS
  log "  building callsite (log: ${logf#$CALLSITE_ROOT/})"
  rm -rf "$wheels"; mkdir -p "$wheels"
  if CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
      "$venv/bin/python" -m pip wheel --disable-pip-version-check --no-build-isolation --no-deps -v \
      -w "$wheels" -C cmake.define.CALLSITE_TESTING=ON "$CALLSITE_ROOT" >"$logf" 2>&1 &&
     "$venv/bin/python" -m pip install --disable-pip-version-check --no-deps --force-reinstall \
      "$wheels"/callsite-*.whl >>"$logf" 2>&1 &&
     (cd / && "$venv/bin/python" -c 'import callsite') >>"$logf" 2>&1; then
    log "  callsite built and installed for Python $minor in $((SECONDS - t0)) s"
  else
    # No older build stays installed for the suite to pass on.
    "$venv/bin/python" -m pip uninstall -y -q callsite >/dev/null 2>&1
    log "  FAILED: callsite build/import for Python $minor; last lines of $logf:"
    tail -n 40 "$logf" >&2
    return 1
  fi
}

mapfile -t AVAIL < <(callsite_available_minors "${MINORS[@]}")
[ ${#AVAIL[@]} -gt 0 ] || die "no usable Python interpreter among: ${MINORS[*]:-${CALLSITE_SUPPORTED_MINORS[*]}}"

failed=()
for m in "${AVAIL[@]}"; do
  setup_one "$m" "$(callsite_find_python "$m")" || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
  log "setup failed for Python: ${failed[*]}"
  exit 1
fi
log "setup done for Python: ${AVAIL[*]}"
