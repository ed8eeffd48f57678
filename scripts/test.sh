#!/usr/bin/env bash
# scripts/test.sh — sets everything up and runs every suite, each a tox environment (tox.ini):
# pytest on every host Python and on the chroot's (scripts/chroot.sh), the peer tests once (in
# 3.11's suite), the C++ tests plain and under ASan+UBSan, the extension under ASan+UBSan, the
# documentation site. Two side by side (tox run-parallel); then tox's summary and the test counts
# (scripts/test_summary.py). Exits non-zero if anything failed, pytest collecting no tests included.
#
# Usage: scripts/test.sh [3.10 3.11 ...]   (default: every version of scripts/common.sh)
#   CALLSITE_TEST_JOBS=N     suites run side by side (default 2; 1: one at a time, live output)
#   CALLSITE_SKIP_CPP=1      skip the C++ suites       CALLSITE_SKIP_ASAN=1   skip the ASan runs
#   CALLSITE_SKIP_DOCS=1     skip the documentation site (its tests run in each Python's suite)
#   CALLSITE_PEERS=0         do not set up the peer venvs (their tests skip)
#   CALLSITE_DSLS=0          do not install requirements/dsls.txt (their tests skip)
#   CALLSITE_PYTEST_ARGS=..  extra pytest arguments    CALLSITE_TEST_TIMEOUT  seconds per suite (2400)
#   CALLSITE_TOX_ARGS=..     extra tox arguments (e.g. --parallel-live)
# tox alone runs the environments too: build/tox/tool/bin/tox p -e python3.12,cpp
# Results and logs: build/test-results/<environment>/; tox's logs: build/tox/<environment>/log/.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"

# tox itself, pinned by requirements/tox.txt, in a cached venv.
BASE="$(command -v python3)" || die "no python3 on PATH"
TOOL="$(callsite_cached_venv tox "$BASE" callsite_pip_install "$CALLSITE_REQUIREMENTS/tox.txt")" ||
  die "could not install tox (build/logs/pip-tox.log)"
mkdir -p build/tox
ln -sfn "$TOOL" build/tox/tool

RESULTS="$CALLSITE_ROOT/build/test-results"
rm -rf "$RESULTS"; mkdir -p "$RESULTS"

# --- which environments ------------------------------------------------------------------------
WANT=("$@"); [ ${#WANT[@]} -gt 0 ] || WANT=("${CALLSITE_HOST_MINORS[@]}" "${CALLSITE_CHROOT_MINORS[@]}")
mapfile -t IN_CHROOT < <(scripts/chroot.sh wanted "${WANT[@]}")
AVAIL=()
for m in "${WANT[@]}"; do
  [[ " ${IN_CHROOT[*]} " != *" $m "* ]] || continue
  if why="$(callsite_skip_reason "$m")"; then # a skipped row in the summary, with its reason
    log "skipping Python $m: $why"
    mkdir -p "$RESULTS/python$m"; echo "$why" >"$RESULTS/python$m/pytest-py$m.skipped"
  else AVAIL+=("$m"); fi
done
# The default Python (else the first one found) builds the C++ tests and the sanitized module.
MAIN="$CALLSITE_DEFAULT_MINOR"
[[ " ${AVAIL[*]} " == *" $MAIN "* ]] || MAIN="${AVAIL[0]:-}"
export CALLSITE_MAIN_MINOR="$MAIN" CALLSITE_HOST_WANTED="${AVAIL[*]}" CALLSITE_CHROOT_WANTED="${IN_CHROOT[*]}"

# Listed by priority: tox starts them in this order as its slots and their `depends` allow.
ENVS=()
[ ${#IN_CHROOT[@]} = 0 ] || ENVS+=(chroot)
[ -z "$MAIN" ] || ENVS+=(setup)
# Without the docs environment, the site's tests run in every host Python's suite.
if [ "${CALLSITE_SKIP_DOCS:-0}" = 1 ]; then export CALLSITE_IGNORE_SITE_TESTS=; else ENVS+=(docs); fi
[ -z "$MAIN" ] || ENVS+=("python$MAIN")
for m in "${AVAIL[@]}"; do [ "$m" = "$MAIN" ] || ENVS+=("python$m"); done
if [ -n "$MAIN" ]; then
  [ "${CALLSITE_SKIP_CPP:-0}" = 1 ] || ENVS+=(cpp)
  [ "${CALLSITE_SKIP_CPP:-0}" = 1 ] || [ "${CALLSITE_SKIP_ASAN:-0}" = 1 ] || ENVS+=(cpp-asan)
  [ "${CALLSITE_SKIP_ASAN:-0}" = 1 ] || ENVS+=(asan)
  # The visible native frames need 3.12+: their own sanitized run unless 3.12 is the main one.
  [ "${CALLSITE_SKIP_ASAN:-0}" = 1 ] || [ "$MAIN" = 3.12 ] || [[ " ${AVAIL[*]} " != *" 3.12 "* ]] ||
    ENVS+=(asan-visible)
fi

# --- running them ------------------------------------------------------------------------------
JOBS="${CALLSITE_TEST_JOBS:-2}"
rc=0
if [ ${#ENVS[@]} -gt 0 ]; then
  MODE=(run-parallel --parallel "$JOBS"); [ "$JOBS" -gt 1 ] || MODE=(run)
  # shellcheck disable=SC2086
  "$TOOL/bin/tox" "${MODE[@]}" -e "$(IFS=,; echo "${ENVS[*]}")" --result-json "$RESULTS/tox.json" \
    ${CALLSITE_TOX_ARGS:-}
  rc=$?
fi
"$TOOL/bin/python" scripts/test_summary.py "$RESULTS" || rc=1
exit "$rc"
