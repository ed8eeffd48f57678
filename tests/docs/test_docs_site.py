"""The documentation site as a reader gets it: every page's local links, images and styles
resolve, the C++ reference covers every declaration of the installed headers, and headless
Chromium renders the front page and an API page with their styles and images loaded
(screenshots kept in build/docs/screenshots/)."""
from __future__ import annotations

import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import urllib.parse

import pytest

from docs_site import HTML, REPO, built_site

SCREENSHOTS = HTML.parent / "screenshots"


@pytest.fixture(scope="module")
def site() -> pathlib.Path:
    return built_site()


# --- local links, images, styles ------------------------------------------------------------------

class _Refs(html.parser.HTMLParser):
    """The local references of one page: (kind, url) and the ids it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])  # type: ignore[arg-type]
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])  # type: ignore[arg-type]
        if tag == "a" and a.get("href"):
            self.refs.append(("link", a["href"]))  # type: ignore[arg-type]
        elif tag == "link" and a.get("href"):
            self.refs.append(("style" if "stylesheet" in (a.get("rel") or "") else "link", a["href"]))  # type: ignore[arg-type]
        elif tag in ("img", "script") and a.get("src"):
            self.refs.append(("image" if tag == "img" else "script", a["src"]))  # type: ignore[arg-type]
        elif tag == "object" and a.get("data"):
            self.refs.append(("image", a["data"]))  # type: ignore[arg-type]


def _parse(page: pathlib.Path) -> _Refs:
    p = _Refs()
    p.feed(page.read_text(encoding="utf-8"))
    return p


def broken_references(root: pathlib.Path) -> list[str]:
    """Every local link, image, script or stylesheet of every page that does not resolve to a
    file of the site, or to an id of the page it names."""
    pages = sorted(root.rglob("*.html"))
    parsed = {p: _parse(p) for p in pages}
    broken = []
    for page, refs in parsed.items():
        for kind, url in refs.refs:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue  # external: not this test's business (the site has none it needs)
            target = page if not parts.path else (page.parent / urllib.parse.unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(root)}: {kind} {url}"
            if not target.is_file():
                broken.append(f"{where} (no file {target})")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if urllib.parse.unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no id {parts.fragment!r} in {target.name})")
    return broken


def test_every_local_link_image_and_style_resolves(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) >= 20, f"the site has {len(pages)} pages"
    assert broken_references(site) == []


def test_a_broken_reference_is_reported(site, tmp_path):
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    index = copy / "index.html"
    text = index.read_text(encoding="utf-8")
    index.write_text(text.replace("</body>", '<a href="install.html#no-such-id">x</a>'
                                  '<img src="_static/missing.svg"></body>'), encoding="utf-8")
    (copy / "_images" / "pipeline.svg").unlink()
    found = broken_references(copy)
    assert any("no id 'no-such-id'" in b for b in found)
    assert any("_static/missing.svg" in b for b in found)
    assert any("pipeline.svg" in b for b in found)


def test_every_existing_docs_page_is_in_the_site(site):
    sources = {p.relative_to(REPO / "docs").with_suffix("").as_posix()
               for p in (REPO / "docs").rglob("*.md") if not any(s.startswith("_") for s in p.parts)}
    missing = sorted(s for s in sources if not (site / f"{s}.html").is_file())
    assert missing == []
    index = (site / "index.html").read_text(encoding="utf-8")
    unlisted = sorted(s for s in sources - {"index"} if f'href="{s}.html"' not in index)
    assert unlisted == [], "pages missing from the navigation"


# --- the C++ reference against the headers --------------------------------------------------------

_DECL = [
    re.compile(r"^\s*(?:struct|class)\s+(\w+)\s*(?:final\s*)?\{", re.M),
    re.compile(r"^\s*enum\s+class\s+(\w+)", re.M),
    re.compile(r"^\s*using\s+(\w+)\s*=", re.M),
    re.compile(r"^#define\s+(CALLSITE_\w+)", re.M),
    re.compile(r"^\s*inline\s+(?:constexpr\s+)?[\w:<>\s\*&]+?[\s\*&](\w+)\s*(?:\(|=)", re.M),
]


def header_declarations() -> set[str]:
    names: set[str] = set()
    for header in sorted((REPO / "include" / "callsite").glob("*.h")):
        text = header.read_text(encoding="utf-8")
        text = re.sub(r"//[^\n]*", "", text)
        for pattern in _DECL:
            names.update(pattern.findall(text))
    return names


def test_the_cpp_reference_documents_every_declaration(site):
    names = header_declarations()
    assert {"RawFrame", "NativeFrame", "Executable", "import", "capture_raw", "CALLSITE_ABI_MAJOR"} <= names
    page = (site / "api" / "cpp.html").read_text(encoding="utf-8")
    shown = set(re.findall(r'<span class="n"><span class="pre">(\w+)</span>', page)) | \
        set(re.findall(r'id="c\.(\w+)"', page))
    missing = sorted(names - shown)
    assert missing == [], f"declared in include/callsite but not on api/cpp.html: {missing}"
    undocumented = (HTML.parent / "doxygen" / "warnings.log")
    if undocumented.is_file():
        assert "warning:" not in undocumented.read_text(encoding="utf-8")


def test_the_cpp_reference_includes_the_installed_paths(site):
    """Every `#include` the C++ page shows for a declaration names the header as a consumer
    writes it (<callsite/native_frame.h>: the headers install under include/callsite/)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "api" / "cpp.html").read_text(encoding="utf-8")))
    shown = set(re.findall(r"#include\s*<([^>]+)>", text))
    headers = {p.name for p in (REPO / "include" / "callsite").glob("*.h")}
    assert "callsite/native_frame.h" in shown, sorted(shown)
    assert not shown & headers, f"shown without their callsite/ directory: {sorted(shown & headers)}"


# --- in a real browser ------------------------------------------------------------------------

# Appended to a copy of a page: after load, writes what the browser made of it into the DOM.
_PROBE = """<script>
window.addEventListener("load", () => {
  // A missing file still gets an (empty) sheet: loaded means it has rules.
  const rules = l => { try { return l.sheet ? l.sheet.cssRules.length : 0; } catch (e) { return -1; } };
  const sheets = [...document.querySelectorAll('link[rel="stylesheet"]')].map(
      l => ({href: l.getAttribute("href"), loaded: rules(l) > 0, rules: rules(l)}));
  const images = [...document.images].map(
      i => ({src: i.getAttribute("src"), loaded: i.complete && i.naturalWidth > 0}));
  const side = document.querySelector(".sidebar-drawer");
  const probe = document.createElement("pre");
  probe.id = "callsite-probe";
  probe.textContent = JSON.stringify({sheets, images,
      font: getComputedStyle(document.body).fontFamily,
      sidebar: side ? side.getBoundingClientRect().width : 0,
      title: document.title});
  document.body.appendChild(probe);
});
</script>"""


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("Debian's chromium is not installed (scripts/docs.sh installs it: apt-get install chromium)")
    return path


def _run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = ["nice", "-n", "10", _chromium(), "--headless", "--no-sandbox", "--disable-gpu",
           "--hide-scrollbars", "--window-size=1280,1000", "--allow-file-access-from-files", "--virtual-time-budget=5000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "HOME": str(HTML.parent)})


def render(page: pathlib.Path, name: str) -> dict:
    """Screenshots `page` into build/docs/screenshots/<name>.png and returns the probe's report."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    png = SCREENSHOTS / f"{name}.png"
    png.unlink(missing_ok=True)
    shot = _run_chromium(f"--screenshot={png}", page.as_uri())
    assert png.is_file() and png.stat().st_size > 10_000, f"no screenshot of {page}:\n{shot.stderr[-3000:]}"
    return _run_probe(page, _PROBE, "callsite-probe")


def _run_probe(page: pathlib.Path, script: str, element_id: str) -> dict:
    """What `script`, appended to a copy of `page` (named with a leading "_": no site page),
    reports in Chromium: the JSON it writes into <pre id=element_id> after load."""
    probe_page = page.with_name(f"_{element_id}_{page.name}")
    probe_page.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"),
                          encoding="utf-8")
    try:
        dom = _run_chromium("--dump-dom", probe_page.as_uri())
    finally:
        probe_page.unlink()
    m = re.search(rf'<pre id="{element_id}">(.*?)</pre>', dom.stdout, re.S)
    assert m, f"the {element_id} script did not run in chromium on {page.name}:\n{dom.stderr[-3000:]}"
    return json.loads(html.unescape(m.group(1)))


def _png_colours(png: pathlib.Path) -> int:
    from PIL import Image  # matplotlib's dependency, in requirements/docs.txt

    with Image.open(png) as im:
        return len(im.convert("RGB").getcolors(maxcolors=1 << 20) or ())


@pytest.mark.parametrize("page,name", [("index.html", "index"), ("api/python.html", "api-python"),
                                       ("api/cpp.html", "api-cpp")])
def test_chromium_renders_the_page_styled(site, page, name):
    report = render(site / page, name)
    assert report["sheets"], "no stylesheet linked"
    assert all(s["loaded"] for s in report["sheets"]), report["sheets"]
    assert all(i["loaded"] for i in report["images"]), report["images"]
    assert "serif" in report["font"] and "Times" not in report["font"], report["font"]  # furo's font stack
    assert report["sidebar"] > 150, "furo's navigation sidebar is not laid out"
    assert "callsite" in report["title"]
    if name == "index":
        assert any(i["src"].endswith("pipeline.svg") for i in report["images"])
    pytest.importorskip("PIL")
    assert _png_colours(SCREENSHOTS / f"{name}.png") > 50, "the screenshot is (nearly) blank"


# Appended to a copy of a page: where its tables and code blocks end against the text column.
_LAYOUT_PROBE = """<script>
window.addEventListener("load", () => {
  const column = document.querySelector("article").getBoundingClientRect().right;
  const scroller = el => {
    for (let a = el.parentElement; a && a.tagName !== "ARTICLE"; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === "auto" || o === "scroll") return a.getBoundingClientRect().right;
    }
    return null;
  };
  const tables = [...document.querySelectorAll("article table")].map(t => ({
    columns: t.rows.length ? t.rows[0].cells.length : 0, right: t.getBoundingClientRect().right,
    scroller: scroller(t), head: t.rows.length ? t.rows[0].innerText.replace(/\\s+/g, " ").slice(0, 60) : ""}));
  const blocks = [...document.querySelectorAll("article pre")].map(p => ({
    wide: p.scrollWidth > p.clientWidth + 1, overflow: getComputedStyle(p).overflowX,
    right: p.getBoundingClientRect().right, head: p.innerText.slice(0, 60)}));
  const probe = document.createElement("pre");
  probe.id = "callsite-layout";
  probe.textContent = JSON.stringify({column, tables, blocks});
  document.body.appendChild(probe);
});
</script>"""
#: Pixels a box may pass the column by: furo's table wrapper pads its table.
_SLACK = 8
#: A table with this many columns or more is a grid of figures: it may scroll in its wrapper.
_WIDE_GRID = 7


def layout(page: pathlib.Path) -> dict:
    return _run_probe(page, _LAYOUT_PROBE, "callsite-layout")


def test_tables_and_code_blocks_fit_the_column_at_1280_px(site):
    """At 1280 px nothing is cut: a table fits the text column (a long name in a cell wraps),
    or, a grid of figures, scrolls inside its wrapper; a code block keeps its lines and scrolls."""
    pages = [p for p in sorted(site.rglob("*.html")) if not p.name.startswith("_")
             and ("<table" in (text := p.read_text(encoding="utf-8")) or "<pre" in text)]
    assert len(pages) >= 15
    cut = []
    for page in pages:
        found = layout(page)
        edge = found["column"] + _SLACK
        for t in found["tables"]:
            if t["right"] <= edge:
                continue
            if t["columns"] >= _WIDE_GRID and t["scroller"] is not None and t["scroller"] <= edge:
                continue
            cut.append(f"{page.relative_to(site)}: table [{t['head']}] ends at {t['right']:.0f} px, "
                       f"the column at {found['column']:.0f}")
        for b in found["blocks"]:
            if b["right"] > edge or (b["wide"] and b["overflow"] not in ("auto", "scroll")):
                cut.append(f"{page.relative_to(site)}: code block [{b['head']}] is cut "
                           f"(overflow-x {b['overflow']}, ends at {b['right']:.0f} px)")
    assert cut == []


def test_chromium_reports_a_missing_stylesheet_and_image(site, tmp_path):
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    (copy / "_static" / "styles" / "furo.css").unlink()
    (copy / "_images" / "pipeline.svg").unlink()
    report = render(copy / "index.html", "broken-index")
    assert [s["href"].split("?")[0] for s in report["sheets"] if not s["loaded"]] == ["_static/styles/furo.css"]
    assert [i["loaded"] for i in report["images"] if i["src"].endswith("pipeline.svg")] == [False]
    (SCREENSHOTS / "broken-index.png").unlink()
