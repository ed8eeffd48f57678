#!/usr/bin/env bash
# scripts/test_sanitized_module.sh — the _callsite extension itself under ASan+UBSan: builds the
# module with CALLSITE_SANITIZE=ON (development layout: build/asan-module-pyX/pkg), then runs the
# Python test suite and the stress test against it, with the sanitizer runtimes preloaded
# (CPython is not instrumented) and PYTHONMALLOC=malloc so ASan sees every Python allocation.
#
# Usage: scripts/test_sanitized_module.sh [3.X]      (default: the default Python)
#   CALLSITE_PYTEST_ARGS=..   extra pytest arguments
#   CALLSITE_SANITIZED_TESTS  test files (paths under tests/) to run; default: the hardening tests
#                             (findings, hostile states, stress, fuzz) and the core suites
#                             below; "all" runs the whole suite (several times longer)
#   writes build/test-results/pytest-asan-pyX.{xml,log,rc} (CALLSITE_RESULTS: another folder)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"

MINOR="${1:-$CALLSITE_DEFAULT_MINOR}"
PY="$(callsite_venv "$MINOR")/bin/python"
[ -x "$PY" ] || die "no venv for Python $MINOR: run scripts/setup.sh $MINOR first"
BUILD="$CALLSITE_ROOT/build/asan-module-py$MINOR"
RESULTS="${CALLSITE_RESULTS:-$CALLSITE_ROOT/build/test-results}"
mkdir -p "$RESULTS"
OUT="$RESULTS/pytest-asan-py$MINOR"

log "=== sanitized module, Python $MINOR: configure + build ($BUILD)"
export PATH="$(dirname "$PY"):$PATH"
if ! { cmake -S "$CALLSITE_ROOT" -B "$BUILD" -G Ninja -DPython_EXECUTABLE="$PY" \
         -DCALLSITE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$BUILD" -j "$(nproc)"; } >"$OUT.build.log" 2>&1; then
  tail -n 40 "$OUT.build.log"
  echo build >"$OUT.rc"
  exit 1
fi

# The sanitizer runtimes must come first in the process: the interpreter is not built with them.
CXX_BIN="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
PRELOAD="$("${CXX_BIN:-c++}" -print-file-name=libasan.so) $("${CXX_BIN:-c++}" -print-file-name=libubsan.so)"
DEFAULT_TESTS="hardening/test_hardening_findings.py hardening/test_hardening_hostile.py
  hardening/test_hardening_stress.py hardening/test_hardening_fuzz.py core/test_traceback.py
  core/test_filter.py native/test_native.py native/test_native_reify.py core/test_linetable.py
  tracking/test_tracking.py core/test_reentrancy.py native/test_native_reentrancy.py
  native/test_native_visible_safety.py native/test_native_locations.py native/test_native_locals.py
  native/test_native_locals_activation.py native/test_native_locals_hardening.py
  core/test_source_lines.py integrations/torch/test_torch_native_texts.py integrations/mlir/test_mlir_capi.py
  core/test_code_extra.py"
SELECTED="${CALLSITE_SANITIZED_TESTS:-$DEFAULT_TESTS}"
if [ "$SELECTED" = all ]; then TESTS=("$CALLSITE_ROOT/tests")
else TESTS=(); for t in $SELECTED; do TESTS+=("$CALLSITE_ROOT/tests/$t"); done; fi
log "=== sanitized module, Python $MINOR: pytest (LD_PRELOAD=$PRELOAD)"
CALLSITE_PYTHONPATH="$BUILD/pkg" LD_PRELOAD="$PRELOAD" PYTHONMALLOC=malloc CALLSITE_SANITIZED=1 \
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  CALLSITE_FUZZ_EXAMPLES="${CALLSITE_FUZZ_EXAMPLES:-40}" CALLSITE_ATHERIS_RUNS="${CALLSITE_ATHERIS_RUNS:-500}" \
  CALLSITE_STRESS_SECONDS="${CALLSITE_STRESS_SECONDS:-10}" \
  "$CALLSITE_ROOT/scripts/pytest.sh" "$OUT" "$PY" "${TESTS[@]}"
rc=$?
# A sanitizer report anywhere (also from a subprocess whose test tolerated a failure) fails it.
if grep -qE "ERROR: AddressSanitizer|runtime error:" "$OUT.log"; then
  log "sanitizer reports in $OUT.log"; [ "$rc" != 0 ] || rc=1
fi
exit $rc
