#!/usr/bin/env bash
# scripts/demo.sh — sets up one Python (3.11, else the first one found) and runs the demos
# (`python -m callsite demo`: the DSL building real MLIR with source locations, native frames).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"
MINOR="$(callsite_demo_minor)"
scripts/setup.sh "$MINOR"
cd /  # import the installed package, not the source tree
exec env -u PYTHONPATH "$(callsite_venv "$MINOR")/bin/python" -m callsite demo "$@"
