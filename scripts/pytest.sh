#!/usr/bin/env bash
# scripts/pytest.sh — the one pytest run of every suite (host venvs, the chroot's, the sanitized
# module): OUT.{xml,log,rc}, the log on stdout too; the installed package is under test, so no
# PYTHONPATH from the caller (set CALLSITE_PYTHONPATH to test a dev build's pkg/).
#
# Usage: scripts/pytest.sh OUT PYTHON [TEST_PATH ...]   (default: the repo's tests/)
#   CALLSITE_PYTEST_ARGS=..  extra pytest arguments    CALLSITE_TEST_TIMEOUT  seconds (2400)
# Exit status: pytest's (5, "no tests collected", included), 124 on timeout.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 2; }
OUT="$1" PY="$2"; shift 2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -gt 0 ] || set -- "$ROOT/tests"
rm -f "$OUT.xml"
# shellcheck disable=SC2086
env -u PYTHONPATH ${CALLSITE_PYTHONPATH:+PYTHONPATH="$CALLSITE_PYTHONPATH"} \
  timeout "${CALLSITE_TEST_TIMEOUT:-2400}" "$PY" -m pytest "$@" -q -p no:cacheprovider \
  -o faulthandler_timeout=600 --durations=15 --junitxml="$OUT.xml" ${CALLSITE_PYTEST_ARGS:-} 2>&1 |
  tee "$OUT.log"
rc=${PIPESTATUS[0]}
echo "$rc" >"$OUT.rc"
exit "$rc"
