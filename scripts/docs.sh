#!/usr/bin/env bash
# scripts/docs.sh — builds the documentation site into build/docs/html, warnings as errors.
#
# Usage: scripts/docs.sh            (CALLSITE_DOCS_PYTHON=3.X picks the interpreter; default 3.12)
# Creates its own venv (.venv/docs) with requirements/docs.txt, builds and installs callsite
# into it (the API reference documents the installed package), runs Doxygen on the installed
# headers (apt-get installs doxygen, and chromium for the browser test, when missing and we are
# root), then sphinx-build -W. Doxygen warnings (an undocumented declaration) fail the build too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"

MINOR="${CALLSITE_DOCS_PYTHON:-3.12}"
BASE="$(callsite_find_python "$MINOR")" || die "scripts/docs.sh needs Python $MINOR: $BASE"
VENV="$CALLSITE_ROOT/.venv/docs"
PY="$VENV/bin/python"
OUT="$CALLSITE_ROOT/build/docs"
mkdir -p "$OUT" "$CALLSITE_ROOT/build/logs"
LOGF="$CALLSITE_ROOT/build/logs/docs.log"
: >"$LOGF"

base_id="$("$BASE" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
if [ ! -x "$PY" ] || [ "$(cat "$VENV/.callsite-base" 2>/dev/null)" != "$base_id" ]; then
  log "docs: creating $VENV from $BASE"
  rm -rf "$VENV"; "$BASE" -m venv "$VENV"; echo "$base_id" >"$VENV/.callsite-base"
fi
want="$(cat requirements/docs.txt) nanobind scikit-build-core cmake ninja"
if [ "$(cat "$VENV/.callsite-docs-reqs" 2>/dev/null)" != "$want" ]; then
  log "docs: pip install -r requirements/docs.txt"
  "$PY" -m pip install --disable-pip-version-check -q -r requirements/docs.txt \
    nanobind scikit-build-core cmake ninja >>"$LOGF" 2>&1 || { tail -n 20 "$LOGF"; die "pip failed (see $LOGF)"; }
  echo "$want" >"$VENV/.callsite-docs-reqs"
fi

if ! command -v doxygen >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    log "docs: apt-get install doxygen"
    callsite_install_packages doxygen >>"$LOGF" 2>&1 \
      || die "apt-get install doxygen failed (see $LOGF)"
  else
    die "doxygen is not installed (apt-get install doxygen)"
  fi
fi

# The site's browser test (tests/docs/test_docs_site.py) renders pages in Debian's headless chromium.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  log "docs: apt-get install chromium (for tests/docs/test_docs_site.py)"
  callsite_install_packages chromium >>"$LOGF" 2>&1 \
    || log "docs: apt-get install chromium failed: the browser test will fail (see $LOGF)"
fi

log "docs: building callsite into $VENV"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  "$PY" -m pip install --disable-pip-version-check --no-build-isolation --no-deps -q \
  --config-settings=build-dir=build/docs/ext . >>"$LOGF" 2>&1 || { tail -n 30 "$LOGF"; die "callsite build failed (see $LOGF)"; }

log "docs: doxygen include/callsite"
rm -rf "$OUT/doxygen"; mkdir -p "$OUT/doxygen"
doxygen docs/Doxyfile >>"$LOGF" 2>&1 || { tail -n 20 "$LOGF"; die "doxygen failed (see $LOGF)"; }
# Doxygen exits 0 on warnings: its log is the verdict (an absent log is a failure too).
[ -f "$OUT/doxygen/warnings.log" ] || die "doxygen wrote no warnings log ($OUT/doxygen/warnings.log)"
if grep -q "warning:" "$OUT/doxygen/warnings.log"; then
  sed "s|$CALLSITE_ROOT/||" "$OUT/doxygen/warnings.log"
  die "doxygen warned: every declaration in include/callsite/*.h needs a /// comment"
fi

log "docs: sphinx-build -W into ${OUT#$CALLSITE_ROOT/}/html"
rm -rf "$OUT/html" "$OUT/doctrees"
(cd / && env -u PYTHONPATH "$PY" -m sphinx -W --keep-going -q -b html -d "$OUT/doctrees" \
  "$CALLSITE_ROOT/docs" "$OUT/html") 2>&1 | tee -a "$LOGF"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || die "sphinx-build failed (rc=$rc)"
log "docs: open $OUT/html/index.html"
