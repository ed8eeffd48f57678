"""Sphinx configuration of callsite's documentation site (scripts/docs.sh builds it)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))

import callsite  # noqa: E402  (the installed package: autodoc documents what users import)

project = "callsite"
author = "The callsite authors"
copyright = "The callsite authors"
release = version = callsite.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "breathe",
    "stub_signatures",
    "benchmark_plots",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_data", "_ext", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4
suppress_warnings = ["myst.xref_missing"] if os.environ.get("CALLSITE_DOCS_LENIENT") else []

# The API reference: autodoc reads the installed package's docstrings (Google style, for
# napoleon); the signatures of C functions and types come from the stubs (stub_signatures).
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_numpy_docstring = False
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
nitpicky = False
default_role = "literal"

intersphinx_mapping: dict[str, tuple[str, str | None]] = {}

# C++: Doxygen's XML of include/callsite/ (scripts/docs.sh runs doxygen first).
breathe_projects = {"callsite": os.environ.get("CALLSITE_DOXYGEN_XML", str(ROOT / "build/docs/doxygen/xml"))}
breathe_default_project = "callsite"
breathe_domain_by_extension = {"h": "cpp"}
cpp_index_common_prefix = ["callsite::"]

html_theme = "furo"
html_title = f"callsite {release}"
html_static_path = ["_static"]
html_css_files = ["callsite.css"]
html_show_sourcelink = False
html_theme_options = {"source_repository": "", "navigation_with_keys": True}
