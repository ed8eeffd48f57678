#!/usr/bin/env bash
# scripts/setup.sh — idempotent set-up: system packages, one venv per Python with the test
# requirements, callsite built (a wheel in build/wheels/py3.X) and installed in it.
#
# Usage: scripts/setup.sh [--bench] [--dsls] [3.10 3.11 ...]   (default: every host Python)
#   requirements/test.txt (required) and test-optional.txt (each line tolerated: its tests skip)
#   --bench                      also requirements/bench.txt (each line tolerated)
#   --dsls / CALLSITE_DSLS=1     also requirements/dsls.txt (each line tolerated)
#   CALLSITE_SETUP_RETRY=1       retry the tolerated lines that failed before
#   CALLSITE_SYSTEM_PACKAGES=0   do not check/install the Debian packages (the chroot has them)
# The dependencies are installed into a cached venv (common.sh's callsite_cached_venv);
# .venv/py3.X is a hard-linked copy of it, so every checkout (a CI clone too) gets its venv in
# seconds. callsite itself is rebuilt on every run (incremental: scikit-build-core keeps
# build/{wheel_tag}-<environment>, backend/callsite_build_backend.py). Exits non-zero if a
# required step failed for any requested, available Python.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BENCH=0
DSLS="${CALLSITE_DSLS:-0}"
MINORS=()
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    --dsls) DSLS=1 ;;
    3.*) MINORS+=("$arg") ;;
    -h|--help) callsite_usage; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

mkdir -p "$CALLSITE_LOGS"

# --- system packages (only when missing) ------------------------------------------------------
if [ "${CALLSITE_SYSTEM_PACKAGES:-1}" != 0 ]; then
  apt_missing=()
  for p in googletest libgtest-dev valgrind ccache; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || apt_missing+=("$p")
  done
  if [ ${#apt_missing[@]} -gt 0 ]; then
    log "installing system packages: ${apt_missing[*]}"
    callsite_install_packages "${apt_missing[@]}" >"$CALLSITE_LOGS/apt.log" 2>&1 ||
      log "WARNING: apt-get install failed (see $CALLSITE_LOGS/apt.log); C++ tests will not build"
  fi
fi

# --- the venvs ---------------------------------------------------------------------------------
# test_venv_install VENV REQUIRED OPTIONAL... : REQUIRED's lines must install; each line of the
# OPTIONAL files may fail (its tests then skip), its first pip error recorded beside the venv
# (.callsite-failed-NAME, which every set-up reports). Run again on the ready venv, pip passes
# over what is installed and retries the lines that failed.
test_venv_install() {
  callsite_pip_install "$1" "$2" || return 1
  callsite_requirements "${@:3}" | test_venv_install_optional "$1"
}

# test_venv_install_optional VENV < LINES : pip-installs each requirement line on its own.
test_venv_install_optional() {
  local venv="$1" req name out
  while read -r req; do
    name="$(sed -E 's/^[[:space:]]*([A-Za-z0-9._-]+).*/\1/' <<<"$req")"
    if out="$("$venv/bin/python" -m pip install --disable-pip-version-check -q "$req" 2>&1 </dev/null)"; then
      rm -f "$venv/.callsite-failed-$name"
    else
      echo "$out"
      callsite_pip_error <<<"$out" >"$venv/.callsite-failed-$name"
    fi
  done
}

setup_one() {
  local minor="$1" venv deps f files=("$CALLSITE_REQUIREMENTS/test.txt" "$CALLSITE_REQUIREMENTS/test-optional.txt")
  [ "$DSLS" != 1 ] || files+=("$CALLSITE_REQUIREMENTS/dsls.txt")
  [ "$BENCH" != 1 ] || files+=("$CALLSITE_REQUIREMENTS/bench.txt")
  venv="$(callsite_venv "$minor")"
  deps="$(callsite_cached_venv "py$minor" "$(callsite_find_python "$minor")" test_venv_install "${files[@]}")" &&
    callsite_linked_venv "$deps" "$venv" || return 1
  for f in "$deps"/.callsite-failed-*; do
    [ ! -f "$f" ] || log "  optional ${f##*/.callsite-failed-} not installed: $(cat "$f")"
  done
  local wheels="$CALLSITE_ROOT/build/wheels/py$minor" logf="$CALLSITE_LOGS/build-py$minor.log" t0=$SECONDS
  log "Python $minor: building callsite into $venv (log: ${logf#"$CALLSITE_ROOT"/})"
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

[ ${#MINORS[@]} -gt 0 ] || MINORS=("${CALLSITE_HOST_MINORS[@]}")
AVAIL=() failed=()
for m in "${MINORS[@]}"; do
  if why="$(callsite_skip_reason "$m")"; then log "skipping Python $m: $why"; continue; fi
  AVAIL+=("$m")
  setup_one "$m" || failed+=("$m")
done
[ ${#AVAIL[@]} -gt 0 ] || die "no usable Python interpreter among: ${MINORS[*]}"
if [ ${#failed[@]} -gt 0 ]; then
  log "setup failed for Python: ${failed[*]}"
  exit 1
fi
log "setup done for Python: ${AVAIL[*]}"
