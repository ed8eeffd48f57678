#!/usr/bin/env bash
# scripts/demo.sh — sets up Python 3.11 only (quick) and runs the DSL demo (`python -m locus demo`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$LOCUS_ROOT"
scripts/setup.sh "$LOCUS_DEFAULT_MINOR"
cd /  # import the installed package, not the source tree
exec env -u PYTHONPATH "$(locus_venv "$LOCUS_DEFAULT_MINOR")/bin/python" -m locus demo "$@"
