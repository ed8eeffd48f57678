#!/usr/bin/env bash
# scripts/setup.sh — idempotent set-up: system packages, one venv per Python, deps, callsite built in.
#
# Usage: scripts/setup.sh [--bench] [--dsls] [3.10 3.11 ...]   (default: every pyenv Python 3.10-3.13)
#   --bench / CALLSITE_BENCH=1   also install jaxlib (torch==2.13.0 is installed on 3.11 always)
#   --dsls / CALLSITE_DSLS=1     also install the DSLs of the integration tests and bench_dsls.py
#                                (pycde, nvidia-cutlass-dsl, jaxlib), each one a tolerated failure
#   CALLSITE_SETUP_RETRY=1       retry optional peers whose install failed before
# Re-runs skip dependency installs recorded in .venv/py3.X/.callsite-stamp-*, but always rebuild
# callsite (incremental: scikit-build-core keeps build/{wheel_tag}). Exits non-zero if callsite
# failed to build for any requested, available Python.
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
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

# pip >= 23.1: the build passes -C (config settings); 3.10's bundled pip is 23.0.
CORE_DEPS=("pip>=23.1" nanobind scikit-build-core pytest cmake ninja)
LOGDIR="$CALLSITE_ROOT/build/logs"
mkdir -p "$LOGDIR"

# --- system packages (only when missing) ------------------------------------------------------
apt_missing=()
for p in googletest libgtest-dev valgrind; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || apt_missing+=("$p")
done
if [ ${#apt_missing[@]} -gt 0 ]; then
  log "installing system packages: ${apt_missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${apt_missing[@]}"; } \
      >"$LOGDIR/apt.log" 2>&1; then
    log "WARNING: apt-get install failed (see $LOGDIR/apt.log); C++ tests will not build"
  fi
fi

# --- per-interpreter venvs --------------------------------------------------------------------
# pip_step VENV_PY NAME REQUIRED SPEC... : installs SPEC once (stamped); REQUIRED=0 tolerates failure.
pip_step() {
  local py="$1" name="$2" required="$3"; shift 3
  local venv; venv="$(dirname "$(dirname "$py")")"
  local stamp="$venv/.callsite-stamp-$name" failed="$venv/.callsite-failed-$name" spec="$*"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$spec" ]; then return 0; fi
  if [ "$required" = 0 ] && [ -f "$failed" ] && [ "${CALLSITE_SETUP_RETRY:-0}" != 1 ]; then
    log "  optional $name not installed: $(cat "$failed") (earlier attempt; CALLSITE_SETUP_RETRY=1 retries)"
    return 0
  fi
  local logf="$LOGDIR/pip-$(basename "$venv")-$name.log"
  log "  pip install $spec"
  if "$py" -m pip install --disable-pip-version-check -q "$@" >"$logf" 2>&1; then
    echo "$spec" >"$stamp"; rm -f "$failed"
    return 0
  fi
  local reason; reason="$(grep -E '^ERROR' "$logf" | head -n 1 | cut -c1-200)"
  [ -n "$reason" ] || reason="pip exited non-zero (see $logf)"
  if [ "$required" = 1 ]; then
    log "  FAILED: pip install $spec: $reason"; tail -n 20 "$logf" >&2
    return 1
  fi
  echo "$reason" >"$failed"
  log "  optional $name not installed: $reason (log: $logf)"
}

setup_one() {
  local minor="$1" base="$2" venv py
  venv="$(callsite_venv "$minor")"; py="$venv/bin/python"
  local base_id; base_id="$("$base" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  if [ ! -x "$py" ] || ! "$py" -c '' 2>/dev/null || [ "$(cat "$venv/.callsite-base" 2>/dev/null)" != "$base_id" ]; then
    log "Python $minor: creating $venv from $base"
    rm -rf "$venv"
    "$base" -m venv "$venv" || return 1
    echo "$base_id" >"$venv/.callsite-base"
  else
    log "Python $minor: using $venv"
  fi
  pip_step "$py" core 1 "${CORE_DEPS[@]}" || return 1
  pip_step "$py" iree 0 iree-base-compiler
  # coverage: the tracked windows are tested alongside its C tracer / sys.monitoring tool.
  pip_step "$py" coverage 0 coverage
  # mypy: the suite type-checks the package (mypy --strict) and its stubs (stubtest).
  pip_step "$py" mypy 0 mypy
  # filecheck: FileCheck for MLIR's own auto_location.py test (tests/mlir_upstream).
  pip_step "$py" filecheck 0 filecheck
  if [ "$DSLS" = 1 ]; then
    # Real DSLs for tests/test_dsl_integration.py; pycde and iree share a venv but never a
    # process (the tests run each design in its own).
    pip_step "$py" pycde 0 pycde
    pip_step "$py" cutlass 0 nvidia-cutlass-dsl
    pip_step "$py" jaxlib 0 jaxlib
  fi
  # Hostile-state and fuzz tests: each is skipped with the reason when its peer is missing.
  pip_step "$py" hypothesis 0 hypothesis
  pip_step "$py" greenlet 0 greenlet
  pip_step "$py" yappi 0 yappi
  pip_step "$py" pyinstrument 0 pyinstrument
  pip_step "$py" viztracer 0 viztracer
  pip_step "$py" atheris 0 atheris
  # py-spy: tests/test_native_visible.py dumps a child blocked in a visible native frame.
  pip_step "$py" py-spy 0 py-spy
  if [ "$BENCH" = 1 ]; then
    pip_step "$py" jaxlib 0 jaxlib
  fi
  # torch for tests/test_torch*.py and bench_torch.py: only the CPU wheel on local disk, which
  # exists for 3.11 alone (any other torch would pull GBs of CUDA).
  if [ "$minor" = 3.11 ]; then pip_step "$py" torch 0 torch==2.13.0
  else log "  torch: only installed for 3.11 (a CPU wheel exists for it only)"; fi
  local logf="$LOGDIR/build-py$minor.log" t0=$SECONDS
  log "  building callsite (log: $logf)"
  if CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
      "$py" -m pip install --disable-pip-version-check --no-build-isolation --no-deps -v \
      --config-settings=cmake.define.CALLSITE_TESTING=ON "$CALLSITE_ROOT" >"$logf" 2>&1 && (cd / && "$py" -c 'import callsite') >>"$logf" 2>&1; then
    log "  callsite built and installed for Python $minor in $((SECONDS - t0)) s"
  else
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
