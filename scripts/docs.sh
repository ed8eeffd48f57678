#!/usr/bin/env bash
# scripts/docs.sh — builds the documentation site into build/docs/html, warnings as errors.
#
# Usage: scripts/docs.sh            (CALLSITE_DOCS_PYTHON=3.X picks the interpreter; default 3.12)
# Its own venv, .venv/docs: a hard-linked copy of a cached one (common.sh's callsite_cached_venv)
# with requirements/docs.txt and test.txt (the build tools); callsite is built and installed into
# it (the API reference documents the installed package). Then Doxygen runs on the installed
# headers (apt-get installs doxygen, and chromium for the browser test, when missing and we are
# root), then sphinx-build -W. Doxygen warnings (an undocumented declaration) fail the build too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$CALLSITE_ROOT"

MINOR="${CALLSITE_DOCS_PYTHON:-3.12}"
BASE="$(callsite_find_python "$MINOR")" || die "scripts/docs.sh needs Python $MINOR: $BASE"
VENV="$CALLSITE_ROOT/.venv/docs"
OUT="$CALLSITE_ROOT/build/docs"
LOGF="$CALLSITE_LOGS/docs.log"
DEPS="$(callsite_cached_venv docs "$BASE" callsite_pip_install "$CALLSITE_REQUIREMENTS/test.txt" \
  "$CALLSITE_REQUIREMENTS/docs.txt")" || die "pip failed (see build/logs/pip-docs.log)"
callsite_linked_venv "$DEPS" "$VENV"
: >"$LOGF"

# Doxygen for the C++ reference; Debian's headless chromium for the site's browser test
# (tests/docs/test_docs_site.py), which fails without it. Installed when missing and we are root.
for tool in doxygen chromium; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    log "docs: apt-get install $tool"
    callsite_install_packages "$tool" >>"$LOGF" 2>&1 || log "docs: apt-get install $tool failed (see $LOGF)"
  fi
done
command -v doxygen >/dev/null 2>&1 || die "doxygen is not installed (apt-get install doxygen; see $LOGF)"

callsite_install_checkout "$VENV" build/docs/ext "$LOGF" || die "callsite build failed (see $LOGF)"

log "docs: doxygen include/callsite"
rm -rf "$OUT/doxygen"; mkdir -p "$OUT/doxygen"
doxygen docs/Doxyfile >>"$LOGF" 2>&1 || { tail -n 20 "$LOGF"; die "doxygen failed (see $LOGF)"; }
# Doxygen exits 0 on warnings: its log is the verdict (an absent log is a failure too).
[ -f "$OUT/doxygen/warnings.log" ] || die "doxygen wrote no warnings log ($OUT/doxygen/warnings.log)"
if grep -q "warning:" "$OUT/doxygen/warnings.log"; then
  sed "s|$CALLSITE_ROOT/||" "$OUT/doxygen/warnings.log"
  die "doxygen warned: every declaration in include/callsite/*.h needs a /// comment"
fi

log "docs: sphinx-build -W into ${OUT#"$CALLSITE_ROOT"/}/html"
rm -rf "$OUT/html" "$OUT/doctrees"
(cd / && env -u PYTHONPATH "$VENV/bin/python" -m sphinx -W --keep-going -q -b html -d "$OUT/doctrees" \
  "$CALLSITE_ROOT/docs" "$OUT/html") 2>&1 | tee -a "$LOGF"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || die "sphinx-build failed (rc=$rc)"
log "docs: open $OUT/html/index.html"
