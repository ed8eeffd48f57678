#!/usr/bin/env bash
# scripts/test.sh — sets everything up and runs every suite: pytest on every host Python and on
# the chroot's (scripts/chroot.sh), the peer tests once (in the default Python's suite, against
# the peer venvs of scripts/peers.sh), the C++ tests plain and under ASan+UBSan, the extension
# under ASan+UBSan, the documentation site (scripts/docs.sh). Prints a summary table; exits
# non-zero if anything failed, pytest collecting no tests (rc 5) included.
#
# Usage: scripts/test.sh [3.10 3.11 ...]   (default: every version of scripts/common.sh)
#   CALLSITE_TEST_JOBS=N     suites run side by side (default 2; 1: one at a time, live output)
#   CALLSITE_SKIP_CPP=1      skip the C++ suites       CALLSITE_SKIP_ASAN=1   skip the ASan runs
#   CALLSITE_SKIP_DOCS=1     skip the documentation site
#   CALLSITE_PEERS=0         do not set up the peer venvs (their tests skip)
#   CALLSITE_DSLS=0          do not install requirements/dsls.txt (their tests skip)
#   CALLSITE_PYTEST_ARGS=..  extra pytest arguments    CALLSITE_TEST_TIMEOUT  seconds per suite (2400)
# Logs: build/test-results/ (one .log per suite, task-*.log per side-by-side task).
set -uo pipefail
export CALLSITE_DSLS="${CALLSITE_DSLS:-1}"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"

RESULTS="$CALLSITE_ROOT/build/test-results"
rm -rf "$RESULTS"; mkdir -p "$RESULTS/rows"
export CALLSITE_TEST_TIMEOUT="${CALLSITE_TEST_TIMEOUT:-2400}"
JOBS="${CALLSITE_TEST_JOBS:-2}"
T_START=$SECONDS
COUNT_PY="$(command -v python3 || true)"
TASK=0                        # the running task's number: orders the summary's rows

# junit_counts FILE -> "passed failed skipped" (pytest and ctest JUnit XML alike).
junit_counts() {
  "$COUNT_PY" - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
p = f = s = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    tags = {child.tag for child in case}
    if tags & {"failure", "error"}: f += 1
    elif "skipped" in tags or case.get("status") in ("notrun", "disabled"): s += 1
    else: p += 1
print(p, f, s)
PY
}

# record NAME PASSED FAILED SKIPPED NOTE : one summary row, kept in a file because the suites
# run in background subshells.
ROW=0
record() {
  ROW=$((ROW + 1))
  printf '%s|%s|%s|%s|%s\n' "$@" >"$RESULTS/rows/$(printf '%03d-%03d' "$TASK" "$ROW")"
}

# record_pytest NAME OUT : the row of a scripts/pytest.sh run (OUT.{rc,xml,secs}).
record_pytest() {
  local name="$1" out="$2" rc p f s note
  rc="$(cat "$out.rc" 2>/dev/null || echo missing)"
  read -r p f s < <( [ -f "$out.xml" ] && junit_counts "$out.xml" || echo "0 0 0")
  p=${p:-0} f=${f:-0} s=${s:-0}
  note="rc=$rc, $(cat "$out.secs" 2>/dev/null || echo '?') s, log: ${out#$CALLSITE_ROOT/}.log"
  case "$rc" in
    0) ;;
    1) [ "$f" -gt 0 ] || f=1 ;;
    5) f=$((f + 1)); note="NO TESTS COLLECTED (rc=5): the suite is broken" ;;
    setup | build) f=$((f + 1)); note="set-up or build failed, log: ${out#$CALLSITE_ROOT/}.build.log" ;;
    124) f=$((f + 1)); note="TIMED OUT after $CALLSITE_TEST_TIMEOUT s" ;;
    *) f=$((f + 1)); note="pytest exited rc=$rc (crash, interrupt or usage error), log: ${out#$CALLSITE_ROOT/}.log" ;;
  esac
  record "$name" "$p" "$f" "$s" "$note"
  [ "$rc" = 0 ] || [ "$JOBS" -le 1 ] || { echo "--- $name (last lines)"; tail -n 15 "$out.log" 2>/dev/null; }
}

# --- what runs where ---------------------------------------------------------------------------
mapfile -t IN_CHROOT < <(scripts/chroot.sh wanted "$@")
mapfile -t AVAIL < <(callsite_available_minors "$@")
WANT=("$@"); [ ${#WANT[@]} -gt 0 ] || WANT=("${CALLSITE_HOST_MINORS[@]}" "${CALLSITE_CHROOT_MINORS[@]}")
for m in "${WANT[@]}"; do
  [[ " ${AVAIL[*]} ${IN_CHROOT[*]} " == *" $m "* ]] || record "python $m" - - - "skipped: $(callsite_skip_reason "$m")"
done
# The default Python's suite (else the first available) also runs the peer tests, which run
# once per run since their interpreter is the peer venv's either way, and the sanitized module.
MAIN_MINOR="$CALLSITE_DEFAULT_MINOR"
[[ " ${AVAIL[*]} " == *" $MAIN_MINOR "* ]] || MAIN_MINOR="${AVAIL[0]:-}"

# --- the tasks ---------------------------------------------------------------------------------
# Every host venv and the peer venvs, one version at a time (each build uses every core).
task_setup() {
  local m
  for m in "${AVAIL[@]}"; do
    log "=== Python $m: setup"
    scripts/setup.sh "$m" || echo setup >"$RESULTS/pytest-py$m.rc"
  done
  if [ "${CALLSITE_PEERS:-1}" = 1 ]; then log "=== peer venvs"; scripts/peers.sh; fi
}

# The documentation site's tests run in the docs task alone: it rebuilds the site they read while
# the other suites run, and its venv has matplotlib for the benchmark figures.
DOCS_TESTS=("$CALLSITE_ROOT/tests/docs/test_docs_site.py" "$CALLSITE_ROOT/tests/docs/test_docs_api.py"
            "$CALLSITE_ROOT/tests/docs/test_benchmark_results.py")

task_pytest() {
  local m="$1" out="$RESULTS/pytest-py$1"
  if [ "$(cat "$out.rc" 2>/dev/null)" = setup ]; then
    record "python $m" 0 1 0 "setup/build failed (see build/logs/build-py$m.log)"; return
  fi
  log "=== Python $m: pytest"
  # The site's tests are the docs task's (DOCS_TESTS).
  local tests=("$CALLSITE_ROOT/tests") t
  if [ "${CALLSITE_SKIP_DOCS:-0}" != 1 ]; then
    for t in "${DOCS_TESTS[@]}"; do tests+=(--ignore="$t"); done
  fi
  CALLSITE_PEER_SUITES="$([ "$m" = "$MAIN_MINOR" ] && echo 1 || echo 0)" \
    scripts/pytest.sh "$out" "$(callsite_venv "$m")/bin/python" "${tests[@]}"
  record_pytest "python $m" "$out"
}

task_chroot() {
  local m why
  if ! why="$(scripts/chroot.sh check)"; then
    for m in "${IN_CHROOT[@]}"; do
      # In CI a missing chroot is a failure: these versions would otherwise go untested unseen.
      if [ -n "${CI:-}" ]; then record "python $m" 0 1 0 "chroot unavailable: $why"
      else record "python $m" - - - "skipped: $why"; fi
    done
    return
  fi
  CALLSITE_PEER_SUITES=0 scripts/chroot.sh test "$RESULTS" "${IN_CHROOT[@]}"
  for m in "${IN_CHROOT[@]}"; do
    if [ "$(cat "$RESULTS/pytest-py$m.rc" 2>/dev/null)" = setup ]; then
      record "python $m" 0 1 0 "chroot setup/build failed (see build/logs/build-py$m.log)"
    else record_pytest "python $m" "$RESULTS/pytest-py$m"; fi
  done
}

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
  (cd "$dir" && timeout "$CALLSITE_TEST_TIMEOUT" ctest --output-on-failure -j "$(nproc)" --output-junit "$xml") \
    >>"$logf" 2>&1
  local rc=$? p f s
  tail -n 5 "$logf"
  read -r p f s < <( [ -f "$xml" ] && junit_counts "$xml" || echo "0 0 0")
  p=${p:-0} f=${f:-0} s=${s:-0}
  local note="rc=$rc, $((SECONDS - t0)) s"
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; note="ctest exited rc=$rc"; fi
  if [ "$((p + f + s))" = 0 ]; then f=1; note="NO C++ TESTS RAN: the suite is broken"; fi
  record "c++ $name" "$p" "$f" "$s" "$note"
}

task_cpp() {
  local m CPP_PY=""
  for m in "$CALLSITE_DEFAULT_MINOR" "${AVAIL[@]}"; do
    if [ -x "$(callsite_venv "$m")/bin/cmake" ]; then CPP_PY="$(callsite_venv "$m")/bin/python"; break; fi
  done
  [ -n "$CPP_PY" ] || { record "c++" 0 1 0 "no venv with cmake to build the C++ tests"; return; }
  export PATH="$(dirname "$CPP_PY"):$PATH"
  run_ctest cpp-tests "$CALLSITE_ROOT/build/cpp-tests"
  [ "${CALLSITE_SKIP_ASAN:-0}" = 1 ] ||
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
      run_ctest cpp-asan "$CALLSITE_ROOT/build/cpp-asan" -DCALLSITE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
}

# The extension itself under ASan+UBSan: the default Python's hardening and core tests, and the
# visible native frames (3.12+) with their stress test.
task_asan() {
  local label="$1" m="$2" rc
  if [ "$(cat "$RESULTS/pytest-py$m.rc" 2>/dev/null)" = setup ]; then
    record "$label $m" 0 1 0 "setup/build failed (see build/logs/build-py$m.log)"; return
  fi
  CALLSITE_PEER_SUITES=0 scripts/test_sanitized_module.sh "$m"; rc=$?
  local out="$RESULTS/pytest-asan-py$m"
  # A sanitizer report with pytest passing, or a failed build, is a failure pytest's rc hides.
  [ "$rc" = 0 ] || [ "$(cat "$out.rc" 2>/dev/null)" != 0 ] || echo "$rc" >"$out.rc"
  [ -f "$out.rc" ] || echo "$rc" >"$out.rc"
  record_pytest "$label $m" "$out"
}

# The documentation site (scripts/docs.sh), then its tests: links, API names, a browser.
task_docs() {
  local out="$RESULTS/docs"
  if ! scripts/docs.sh >"$out.build.log" 2>&1; then
    tail -n 30 "$out.build.log"; record docs 0 1 0 "scripts/docs.sh failed (${out#$CALLSITE_ROOT/}.build.log)"; return
  fi
  CALLSITE_DOCS_HTML="$CALLSITE_ROOT/build/docs/html" CALLSITE_PEER_SUITES=0 \
    scripts/pytest.sh "$out" "$CALLSITE_ROOT/.venv/docs/bin/python" "${DOCS_TESTS[@]}"
  record_pytest docs "$out"
}

# --- running them: JOBS at a time ---------------------------------------------------------------
declare -A TASK_NAME=() TASK_T0=() TASK_NUM=() LAUNCHED=()
# launch NAME FUNCTION ARGS... : runs a task, in the foreground when JOBS is 1 (live output),
# else in the background once fewer than JOBS run (output in build/test-results/task-NAME.log).
launch() {
  local name="$1"; shift
  TASK=$((TASK + 1)); ROW=0
  if [ "$JOBS" -le 1 ]; then
    local t0=$SECONDS
    CALLSITE_PYTEST_LIVE=1 "$@"
    ended "$name" "$TASK" $((SECONDS - t0))
    return
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do reap; done
  log "=== $name: started (log: ${RESULTS#$CALLSITE_ROOT/}/task-$name.log)"
  CALLSITE_PYTEST_LIVE=0 "$@" >"$RESULTS/task-$name.log" 2>&1 </dev/null &
  TASK_NAME[$!]="$name"; TASK_T0[$!]=$SECONDS; TASK_NUM[$!]=$TASK
}
# ended NAME NUMBER SECONDS : a task that ended without a row (killed, a script error) failed.
ended() {
  log "=== $1: done in $3 s"
  echo "$1 $3" >>"$RESULTS/task-times"
  [ "$1" = setup ] || compgen -G "$RESULTS/rows/$(printf '%03d' "$2")-*" >/dev/null ||
    printf '%s|0|1|0|ended without a result (see %s)\n' "$1" "${RESULTS#$CALLSITE_ROOT/}/task-$1.log" \
      >"$RESULTS/rows/$(printf '%03d' "$2")-001"
}
# reap : waits for a background task to end and reports it.
reap() {
  local pid=""
  wait -n -p pid 2>/dev/null
  if [ -z "$pid" ]; then # no child left to wait for: whatever is still listed has ended
    for pid in "${!TASK_NAME[@]}"; do kill -0 "$pid" 2>/dev/null || reaped "$pid"; done
    sleep 1; return 0
  fi
  [ -z "${TASK_NAME[$pid]:-}" ] || reaped "$pid"
}
reaped() {
  ended "${TASK_NAME[$1]}" "${TASK_NUM[$1]}" $((SECONDS - TASK_T0[$1]))
  unset "TASK_NAME[$1]"
}
# wait_for NAME : waits until task NAME has ended.
wait_for() {
  local pid
  for pid in "${!TASK_NAME[@]}"; do
    [ "${TASK_NAME[$pid]:-}" = "$1" ] || continue # reaped meanwhile: unset
    while [ -n "${TASK_NAME[$pid]:-}" ]; do reap; done
  done
}

# The chroot's suites are the longest chain and need nothing from the host's: first.
[ ${#IN_CHROOT[@]} = 0 ] || launch chroot task_chroot
launch setup task_setup
# The site has a venv of its own (scripts/docs.sh): it takes the chroot's slot while setup runs.
[ "${CALLSITE_SKIP_DOCS:-0}" = 1 ] || [ ! -x scripts/docs.sh ] || launch docs task_docs
wait_for setup
for m in "$MAIN_MINOR" "${AVAIL[@]}"; do
  [ -n "$m" ] && [ -z "${LAUNCHED[$m]:-}" ] || continue
  LAUNCHED[$m]=1; launch "python-$m" task_pytest "$m"
done
[ "${CALLSITE_SKIP_CPP:-0}" = 1 ] || launch cpp task_cpp
if [ "${CALLSITE_SKIP_ASAN:-0}" != 1 ] && [ -n "$MAIN_MINOR" ]; then
  launch "asan-$MAIN_MINOR" task_asan "asan module" "$MAIN_MINOR"
  [[ " ${AVAIL[*]} " != *" 3.12 "* ]] || [ "$MAIN_MINOR" = 3.12 ] ||
    CALLSITE_SANITIZED_TESTS="native/test_native_visible.py hardening/test_hardening_stress.py" launch asan-3.12 task_asan "asan visible" 3.12
fi
while [ ${#TASK_NAME[@]} -gt 0 ]; do reap; done

# --- summary -----------------------------------------------------------------------------------
TOTAL_P=0 TOTAL_F=0 TOTAL_S=0
echo
echo "==================== callsite test summary ($((SECONDS - T_START)) s, $JOBS side by side) ===================="
printf '%-16s %8s %8s %8s  %s\n' suite passed failed skipped note
for row_file in "$RESULTS"/rows/*; do
  [ -f "$row_file" ] || continue
  IFS='|' read -r n p f s note <"$row_file"
  printf '%-16s %8s %8s %8s  %s\n' "$n" "$p" "$f" "$s" "$note"
  [ "$p" = - ] || { TOTAL_P=$((TOTAL_P + p)); TOTAL_F=$((TOTAL_F + f)); TOTAL_S=$((TOTAL_S + s)); }
done
[ -n "$(ls "$RESULTS/rows")" ] || { echo "nothing ran"; TOTAL_F=$((TOTAL_F + 1)); }
[ ! -f "$RESULTS/task-times" ] || { echo; echo "wall-clock per task (s):"; sed 's/^/  /' "$RESULTS/task-times"; }
echo
echo "$TOTAL_P passed, $TOTAL_F failed, $TOTAL_S skipped"
[ "$TOTAL_F" = 0 ]
