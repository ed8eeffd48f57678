#!/usr/bin/env bash
# scripts/test.sh — sets everything up, runs pytest on every Python and the C++ tests (plain and
# ASan+UBSan), prints a summary table; exits non-zero if anything failed.
#
# Usage: scripts/test.sh [3.10 3.11 ...]   (default: every pyenv Python 3.10-3.13, and 3.14 and
#                                          3.15 in a Debian sid chroot: scripts/chroot.sh)
#   CALLSITE_SKIP_CPP=1      skip the C++ suites       CALLSITE_SKIP_ASAN=1   skip the ASan runs
#   CALLSITE_PYTEST_ARGS=..  extra pytest arguments    CALLSITE_TEST_TIMEOUT  seconds per suite (1200)
#   CALLSITE_TEST_JOBS=N     run N Python versions' suites at once (default 1)
#   CALLSITE_SKIP_DOCS=1     skip the documentation site (scripts/docs.sh)
#   CALLSITE_DSLS=0          do not install the DSLs of the integration tests (their tests skip)
set -uo pipefail
export CALLSITE_DSLS="${CALLSITE_DSLS:-1}"  # setup.sh --dsls: pycde, CuTe DSL, jaxlib (tolerated)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"

RESULTS="$CALLSITE_ROOT/build/test-results"
rm -rf "$RESULTS"; mkdir -p "$RESULTS"
TIMEOUT="${CALLSITE_TEST_TIMEOUT:-1200}"
T_START=$SECONDS
ROWS=()                       # "name|passed|failed|skipped|note"
TOTAL_P=0 TOTAL_F=0 TOTAL_S=0

# junit_counts FILE -> "passed failed skipped" (pytest and ctest JUnit XML alike).
junit_counts() {
  "$COUNT_PY" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
p = f = s = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    tags = {child.tag for child in case}
    if tags & {"failure", "error"}: f += 1
    elif "skipped" in tags or case.get("status") in ("notrun", "disabled"): s += 1
    else: p += 1
print(p, f, s)
EOF
}

# record NAME PASSED FAILED SKIPPED NOTE
record() {
  ROWS+=("$1|$2|$3|$4|$5")
  TOTAL_P=$((TOTAL_P + $2)); TOTAL_F=$((TOTAL_F + $3)); TOTAL_S=$((TOTAL_S + $4))
}

# --- Python suites -----------------------------------------------------------------------------
# 3.14 and 3.15 are tested in a Debian sid chroot (scripts/chroot.sh), the others on pyenv's.
mapfile -t IN_CHROOT < <(scripts/chroot.sh wanted "$@")
mapfile -t AVAIL < <(callsite_available_minors "$@")
WANT=("$@"); [ ${#WANT[@]} -gt 0 ] || WANT=("${CALLSITE_SUPPORTED_MINORS[@]}")
for m in "${WANT[@]}"; do
  [[ " ${AVAIL[*]} ${IN_CHROOT[*]} " == *" $m "* ]] || ROWS+=("python $m|-|-|-|skipped: $(callsite_skip_reason "$m")")
done
COUNT_PY="$(command -v python3 || true)"
JOBS="${CALLSITE_TEST_JOBS:-1}"

# run_pytest MINOR : one version's suite -> $RESULTS/pytest-pyMINOR.{xml,log,rc,secs}
run_pytest() {
  local m="$1" t0=$SECONDS py; py="$(callsite_venv "$m")/bin/python"
  # The installed package is under test: no PYTHONPATH, nothing from python/ on sys.path.
  env -u PYTHONPATH timeout "$TIMEOUT" "$py" -m pytest "$CALLSITE_ROOT/tests" -q -p no:cacheprovider \
    -o faulthandler_timeout=600 --junitxml="$RESULTS/pytest-py$m.xml" ${CALLSITE_PYTEST_ARGS:-} \
    >"$RESULTS/pytest-py$m.log" 2>&1
  echo $? >"$RESULTS/pytest-py$m.rc"
  echo $((SECONDS - t0)) >"$RESULTS/pytest-py$m.secs"
}

# Set-up first, one version at a time (each build uses every core).
READY=()
for m in "${AVAIL[@]}"; do
  log "=== Python $m: setup"
  if scripts/setup.sh "$m"; then READY+=("$m"); COUNT_PY="$(callsite_venv "$m")/bin/python"
  else echo "setup" >"$RESULTS/pytest-py$m.rc"; fi
done
# Then the suites: in order with live output, or CALLSITE_TEST_JOBS at a time with logs after.
for m in "${READY[@]}"; do
  if [ "$JOBS" -le 1 ]; then
    log "=== Python $m: pytest"
    run_pytest "$m" & pid=$!
    tail -n +1 -F --pid="$pid" "$RESULTS/pytest-py$m.log" 2>/dev/null; wait "$pid"
  else
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    log "=== Python $m: pytest (in the background, log: ${RESULTS#$CALLSITE_ROOT/}/pytest-py$m.log)"
    run_pytest "$m" &
  fi
done
wait
if [ ${#IN_CHROOT[@]} -gt 0 ]; then
  if why="$(scripts/chroot.sh check)"; then
    scripts/chroot.sh test "$RESULTS" "${IN_CHROOT[@]}"; AVAIL+=("${IN_CHROOT[@]}")
  else
    for m in "${IN_CHROOT[@]}"; do
      # In CI a missing chroot is a failure: 3.14 and 3.15 would otherwise go untested unseen.
      if [ -n "${CI:-}" ]; then record "python $m" 0 1 0 "chroot unavailable: $why"
      else ROWS+=("python $m|-|-|-|skipped: $why"); fi
    done
  fi
fi
for m in "${AVAIL[@]}"; do
  rc="$(cat "$RESULTS/pytest-py$m.rc" 2>/dev/null || echo missing)"
  if [ "$rc" = setup ]; then
    record "python $m" 0 1 0 "setup/build failed (see build/logs/build-py$m.log)"; continue
  fi
  if [ "$JOBS" -gt 1 ]; then echo "--- Python $m (last lines)"; tail -n 15 "$RESULTS/pytest-py$m.log"; fi
  xml="$RESULTS/pytest-py$m.xml"
  read -r p f s < <( [ -f "$xml" ] && junit_counts "$xml" || echo "0 0 0")
  p=${p:-0} f=${f:-0} s=${s:-0}
  note="rc=$rc, $(cat "$RESULTS/pytest-py$m.secs" 2>/dev/null || echo '?') s"
  case "$rc" in
    0) ;;
    1) [ "$f" -gt 0 ] || f=1 ;;
    5) f=$((f + 1)); note="NO TESTS COLLECTED (rc=5): the suite is broken"
       log "ERROR: pytest collected no tests on Python $m — treating as a failure" ;;
    124) f=$((f + 1)); note="TIMED OUT after $TIMEOUT s" ;;
    *) f=$((f + 1)); note="pytest exited rc=$rc (crash, interrupt or usage error)" ;;
  esac
  record "python $m" "$p" "$f" "$s" "$note"
done

# --- C++ suites --------------------------------------------------------------------------------
# run_ctest NAME BUILD_DIR CMAKE_ARGS... : configure, build callsite_cpp_tests, run ctest.
run_ctest() {
  local name="$1" dir="$2"; shift 2
  local logf="$RESULTS/$name.log" xml="$RESULTS/$name.xml" t0=$SECONDS
  log "=== C++ $name: configure + build ($dir)"
  if ! { cmake -S "$CALLSITE_ROOT" -B "$dir" -G Ninja -DCALLSITE_BUILD_TESTS=ON \
           -DPython_EXECUTABLE="$CPP_PY" "$@" &&
         cmake --build "$dir" --target callsite_cpp_tests -j "$(nproc)"; } >"$logf" 2>&1; then
    tail -n 40 "$logf"
    record "c++ $name" 0 1 0 "configure/build failed (see ${logf#$CALLSITE_ROOT/})"
    return
  fi
  log "=== C++ $name: ctest"
  (cd "$dir" && timeout "$TIMEOUT" ctest --output-on-failure -j "$(nproc)" --output-junit "$xml") 2>&1 \
    | tee -a "$logf" | tail -n 30
  local rc=${PIPESTATUS[0]} p f s
  read -r p f s < <( [ -f "$xml" ] && junit_counts "$xml" || echo "0 0 0")
  p=${p:-0} f=${f:-0} s=${s:-0}
  local note="rc=$rc, $((SECONDS - t0)) s"
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; note="ctest exited rc=$rc"; fi
  if [ "$((p + f + s))" = 0 ]; then f=1; note="NO C++ TESTS RAN: the suite is broken"; fi
  record "c++ $name" "$p" "$f" "$s" "$note"
}

if [ "${CALLSITE_SKIP_CPP:-0}" != 1 ]; then
  CPP_MINOR=""
  for m in "$CALLSITE_DEFAULT_MINOR" "${AVAIL[@]}"; do
    if [ -x "$(callsite_venv "$m")/bin/python" ] && [ -x "$(callsite_venv "$m")/bin/cmake" ]; then CPP_MINOR="$m"; break; fi
  done
  if [ -z "$CPP_MINOR" ]; then
    record "c++" 0 1 0 "no venv with cmake to build the C++ tests"
  else
    CPP_PY="$(callsite_venv "$CPP_MINOR")/bin/python"; COUNT_PY="$CPP_PY"
    export PATH="$(callsite_venv "$CPP_MINOR")/bin:$PATH"
    run_ctest cpp-tests "$CALLSITE_ROOT/build/cpp-tests"
    if [ "${CALLSITE_SKIP_ASAN:-0}" != 1 ]; then
      ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
        run_ctest cpp-asan "$CALLSITE_ROOT/build/cpp-asan" -DCALLSITE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
    fi
  fi
fi

# --- the extension itself under ASan+UBSan (one Python version) -------------------------------
# run_sanitized LABEL MINOR : test_sanitized_module.sh MINOR (CALLSITE_SANITIZED_TESTS as set by
# the caller), recorded as "LABEL MINOR".
run_sanitized() {
  local label="$1" m="$2" rc p f s
  scripts/test_sanitized_module.sh "$m"; rc=$?
  read -r p f s < <(junit_counts "$RESULTS/pytest-asan-py$m.xml" 2>/dev/null || echo "0 0 0")
  [ "$rc" = 0 ] || [ "${f:-0}" -gt 0 ] || f=1
  record "$label $m" "${p:-0}" "${f:-0}" "${s:-0}" "rc=$rc, $(cat "$RESULTS/pytest-asan-py$m.secs") s"
}
if [ "${CALLSITE_SKIP_ASAN:-0}" != 1 ] && [ ${#READY[@]} -gt 0 ]; then
  m="$CALLSITE_DEFAULT_MINOR"; [[ " ${READY[*]} " == *" $m "* ]] || m="${READY[0]}"
  run_sanitized "asan module" "$m"
  # Visible native frames (3.12+) under the sanitizers too: their own tests and the stress.
  v=3.12
  if [ "$v" != "$m" ] && [[ " ${READY[*]} " == *" $v "* ]]; then
    CALLSITE_SANITIZED_TESTS="test_native_visible.py test_hardening_stress.py" \
      run_sanitized "asan visible" "$v"
  fi
fi

# --- the documentation site: scripts/docs.sh, then its tests (links, API names, browser) ----
if [ "${CALLSITE_SKIP_DOCS:-0}" != 1 ]; then
  log "=== docs: scripts/docs.sh + tests/test_docs_site.py tests/test_docs_api.py"
  if scripts/docs.sh >"$RESULTS/docs.log" 2>&1; then
    env -u PYTHONPATH CALLSITE_DOCS_HTML="$CALLSITE_ROOT/build/docs/html" "$CALLSITE_ROOT/.venv/docs/bin/python" \
      -m pytest tests/test_docs_site.py tests/test_docs_api.py -q -p no:cacheprovider \
      --junitxml="$RESULTS/docs.xml" >>"$RESULTS/docs.log" 2>&1
    rc=$?
    read -r p f s < <(junit_counts "$RESULTS/docs.xml" 2>/dev/null || echo "0 1 0")
    [ "$rc" = 0 ] || [ "${f:-0}" != 0 ] || f=1  # a crash or no tests at all is a failure too
    record docs "${p:-0}" "${f:-0}" "${s:-0}" "rc=$rc; site: build/docs/html, screenshots: build/docs/screenshots, log: ${RESULTS#$CALLSITE_ROOT/}/docs.log"
  else tail -n 30 "$RESULTS/docs.log"; record docs 0 1 0 "scripts/docs.sh failed (${RESULTS#$CALLSITE_ROOT/}/docs.log)"; fi
fi

# --- summary -----------------------------------------------------------------------------------
echo
echo "==================== callsite test summary ($((SECONDS - T_START)) s) ===================="
printf '%-16s %8s %8s %8s  %s\n' suite passed failed skipped note
for row in "${ROWS[@]}"; do
  IFS='|' read -r n p f s note <<<"$row"
  printf '%-16s %8s %8s %8s  %s\n' "$n" "$p" "$f" "$s" "$note"
done
[ ${#ROWS[@]} -gt 0 ] || { echo "nothing ran"; TOTAL_F=$((TOTAL_F + 1)); }
echo
echo "$TOTAL_P passed, $TOTAL_F failed, $TOTAL_S skipped"
[ "$TOTAL_F" = 0 ]
