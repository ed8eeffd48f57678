#!/usr/bin/env bash
# scripts/demo.sh — sets up Python 3.11 only (quick) and runs the DSL demo (`python -m callsite demo`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"
scripts/setup.sh "$CALLSITE_DEFAULT_MINOR"
cd /  # import the installed package, not the source tree
exec env -u PYTHONPATH "$(callsite_venv "$CALLSITE_DEFAULT_MINOR")/bin/python" -m callsite demo "$@"
