"""The layer rule of docs/architecture.md, checked on every #include under src/ and include/.

Each folder of src/ is on one layer; a file may include its own folder, any folder on a lower
layer, and another folder of its own layer as long as the folders' include graph has no
cycle. The installed headers (include/callsite/) are on the core layer. A file's stem (its
name up to the first dot) names one thing, so it lives in one folder: `filter/x.h` and
`python/x.cc` may not both exist. The checker is run on small trees that break the rules too,
so it is known to be able to fail.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from where import REPO  # noqa: E402

#: Lowest first; the folders of one tuple share a layer (docs/architecture.md).
LAYERS = (
    ("layouts",),
    ("core", "callsite"),  # callsite: the installed headers, include/callsite/
    ("symbolize", "native"),
    ("capture",),
    ("filter", "render"),
    ("tracking", "mlir", "torch"),
    ("python",),
    ("bindings",),
    ("testing",),
)
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
#: What an outside extension reaches through the capsule, and nothing more.
INSTALLED_HEADERS = {"abi.h", "api.h", "callsite.h", "frame.h", "native_frame.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCE_SUFFIXES = (".c", ".cc", ".h")


def source_files(root: Path):
    """(folder, path) of every C/C++ file under root/src and root/include/callsite."""
    for base, folder_of in ((root / "src", None), (root / "include" / "callsite", "callsite")):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix in SOURCE_SUFFIXES:
                yield folder_of or path.relative_to(base).parts[0], path


def resolve(root: Path, target: str) -> str | None:
    """The folder an include names ("capture/capture.h" → "capture"), or None if it names
    no file of src/ or include/ (a path outside them, a relative path)."""
    parts = target.split("/")
    if len(parts) != 2 or ".." in parts:
        return None
    if (root / "src" / target).is_file():
        return parts[0]
    if parts[0] == "callsite" and (root / "include" / target).is_file():
        return "callsite"
    return None


def check(root: Path) -> tuple[list[str], dict[str, set[str]]]:
    """Every violation of the rule, and the folder graph (folder -> folders it includes)."""
    problems: list[str] = []
    graph: dict[str, set[str]] = {}
    for folder, path in source_files(root):
        where = path.relative_to(root)
        if folder not in RANK:
            problems.append(f"{where}: folder {folder!r} is on no layer (add it to the rule)")
            continue
        for target in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            to = resolve(root, target)
            if to is None:
                problems.append(f'{where}: #include "{target}" names no header of src/ or '
                                "include/ as folder/file.h")
                continue
            if to == folder:
                continue
            if to not in RANK:
                problems.append(f'{where}: #include "{target}": folder {to!r} is on no layer')
                continue
            graph.setdefault(folder, set()).add(to)
            if RANK[to] > RANK[folder]:
                problems.append(f'{where}: #include "{target}": {folder} (layer {RANK[folder]}) '
                                f"includes {to} (layer {RANK[to]}), a higher layer")
    return problems, graph


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
#: A function's head at the start of a line (the style puts namespace-level functions there):
#: a return type, an optionally qualified name, "(".
FUNCTION_HEAD = re.compile(
    r"^(?!(?:static|inline|template|typedef|using|return|namespace|struct|class|enum|union|"
    r"extern|constexpr|friend|if|for|while|switch|case|else|do)\b)"
    r"[A-Za-z_][\w:<>,\*& ]*?[\*& ](?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)\(", re.M)
FUNCTION_TAIL = re.compile(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?([;{:=])")


def functions(path: Path):
    """(name, number of parameters), "declared" or "defined", for each function at the start
    of a line of `path` (the arity tells overloads of one name apart)."""
    text = COMMENT.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
    for m in FUNCTION_HEAD.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        tail = FUNCTION_TAIL.match(text, i)
        if tail is None:
            continue
        params = text[m.end():i - 1].strip()
        arity = 0 if params in ("", "void") else params.count(",") + 1
        yield (m.group(1), arity), "declared" if tail.group(1) in ";=" else "defined"


def defined_above(root: Path) -> list[str]:
    """Every function declared in a header of one layer and defined in a source file of a
    higher layer ("name: declared in filter, defined in src/python/x.cc"): the include rule
    cannot see it, as the lower layer calls up without including anything above it."""
    declared: dict[tuple[str, int], set[str]] = {}
    defined: dict[tuple[str, int], set[tuple[str, str]]] = {}
    for folder, path in source_files(root):
        if folder not in RANK:
            continue
        for key, kind in functions(path):
            if kind == "declared" and path.suffix == ".h":
                declared.setdefault(key, set()).add(folder)
            elif kind == "defined" and path.suffix != ".h":
                defined.setdefault(key, set()).add((folder, str(path.relative_to(root))))
    problems = []
    for key, folders in sorted(declared.items()):
        lowest = min(folders, key=RANK.__getitem__)
        for folder, where in sorted(defined.get(key, ())):
            if RANK[folder] > RANK[lowest] and folder not in folders:
                problems.append(f"{key[0]}: declared in {lowest} (layer {RANK[lowest]}), "
                                f"defined in {where} (layer {RANK[folder]})")
    return problems


def stem_of(path: Path) -> str:
    """The name up to the first dot: "visible_frame.inc.h" -> "visible_frame"."""
    return path.name.split(".", 1)[0]


def shared_stems(root: Path) -> list[str]:
    """Every file stem found in more than one folder, as "stem: folder/a.h, other/a.cc"."""
    homes: dict[str, dict[str, list[str]]] = {}
    for folder, path in source_files(root):
        homes.setdefault(stem_of(path), {}).setdefault(folder, []).append(
            str(path.relative_to(root)))
    return [f"{stem}: " + ", ".join(p for paths in folders.values() for p in paths)
            for stem, folders in sorted(homes.items()) if len(folders) > 1]


def folder_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the folder graph as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def stem_graph(root: Path) -> dict[str, set[str]]:
    """The include graph inside each folder, between the things its files name (a stem: the
    header and its source are one node), as "folder/stem" -> the "folder/stem"s it includes."""
    graph: dict[str, set[str]] = {}
    for folder, path in source_files(root):
        here = f"{folder}/{stem_of(path)}"
        for target in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            if resolve(root, target) != folder:
                continue
            there = f"{folder}/{stem_of(Path(target))}"
            if there != here:
                graph.setdefault(here, set()).add(there)
    return graph


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# --- the real tree --------------------------------------------------------------------------

def test_the_source_tree_is_there():
    files = list(source_files(REPO))
    assert len(files) > 50, f"no sources under {REPO}/src: the test must run from a checkout"


def test_every_include_follows_the_layer_rule():
    problems, _ = check(REPO)
    assert problems == []


def test_the_folder_graph_has_no_cycle():
    _, graph = check(REPO)
    assert folder_cycle(graph) is None


def test_no_include_cycle_inside_a_folder():
    """Inside a folder too the files are in an order, lowest first: no two of its headers (with
    their sources) include each other, directly or around a loop."""
    assert folder_cycle(stem_graph(REPO)) is None


def test_every_function_is_defined_on_its_header_s_layer():
    """A function a lower layer declares is defined there too (or the lower layer would call
    up): what the layers above provide, they register (filter/filter.h set_default_filter_maker,
    mlir/locate.h set_bindings_detector)."""
    assert defined_above(REPO) == []


PACKAGE_IMPORT = re.compile(r'PyImport_\w+\(\s*"callsite[."]')


def package_imports(root: Path) -> list[str]:
    """Every C/C++ file that imports the callsite Python package (or one of its modules)."""
    return [str(path.relative_to(root)) for folder, path in source_files(root)
            if folder != "testing" and PACKAGE_IMPORT.search(path.read_text())]


def test_no_cxx_imports_the_python_package():
    """The package sits above every C++ layer: what C++ needs from it (the MLIR bindings'
    detector, the warnings' base class) the package registers when it is imported."""
    assert package_imports(REPO) == []


def test_checker_reports_a_package_import(tmp_path):
    tree = {**GOOD_TREE, "src/core/ok.cc": 'PyImport_ImportModule("callsitex");\n',
            "src/mlir/bad.cc": 'PyObject *m = PyImport_ImportModule("callsite.mlir");\n'}
    assert package_imports(write_tree(tmp_path, tree)) == ["src/mlir/bad.cc"]


def test_every_file_stem_has_one_folder():
    """One name, one home: a concept's header, source and Python type live under names that
    do not repeat across folders (the type of filter/decisions.h is python/filter_type.cc)."""
    assert shared_stems(REPO) == []


def test_installed_headers_are_exactly_the_capsule_api():
    installed = {p.name for p in (REPO / "include" / "callsite").iterdir()}
    assert installed == INSTALLED_HEADERS


def test_no_version_test_outside_layouts_and_compat():
    """Per-version facts live in src/layouts/ (frame layouts) and src/core/compat.h (the
    public API's differences), and in include/callsite/abi.h the few the installed headers
    need (other extensions compile them, and cannot include compat.h, which uses them);
    nothing else tests PY_VERSION_HEX."""
    allowed = {REPO / "src" / "core" / "compat.h", REPO / "include" / "callsite" / "abi.h"}
    offenders = [
        str(path.relative_to(REPO))
        for folder, path in source_files(REPO)
        if folder != "layouts" and path not in allowed and "PY_VERSION_HEX" in path.read_text()
    ]
    assert offenders == []


def test_no_catch_all_that_could_swallow_a_forced_unwind():
    """`catch (...)` also catches pthread_exit's forced unwind (a daemon thread ended at
    interpreter exit before 3.14): the library catches std::exception only (out of memory)."""
    offenders = [
        str(path.relative_to(REPO))
        for folder, path in source_files(REPO)
        if folder != "testing" and "catch (...)" in path.read_text()
    ]
    assert offenders == []


# --- the checker can fail -------------------------------------------------------------------

GOOD_TREE = {
    "src/layouts/layout.h": "#pragma once\n",
    "src/core/args.h": '#include "layouts/layout.h"\n',
    "src/capture/capture.cc": '#include "core/args.h"\n#include "callsite/frame.h"\n',
    "src/filter/filter.cc": '#include "capture/capture.cc"\n',
    "src/render/text.cc": '#include "filter/filter.cc"\n',
    "include/callsite/frame.h": "#pragma once\n",
}


def test_checker_accepts_a_tree_that_follows_the_rule(tmp_path):
    problems, graph = check(write_tree(tmp_path, GOOD_TREE))
    assert problems == []
    assert graph["render"] == {"filter"}  # same layer, one way: allowed
    assert folder_cycle(graph) is None


@pytest.mark.parametrize("path, text, message", [
    ("src/capture/bad.cc", '#include "filter/filter.cc"\n', "capture (layer 3) includes filter"),
    ("src/layouts/bad.c", '#include "callsite/frame.h"\n', "layouts (layer 0) includes callsite"),
    ("src/native/bad.cc", '#include "../../examples/interp/interp.h"\n', "names no header"),
    ("src/core/bad.h", '#include "core/missing.h"\n', "names no header"),
    ("src/newfolder/x.cc", "\n", "is on no layer"),
    ("include/callsite/bad.h", '#include "capture/capture.cc"\n', "callsite (layer 1) includes capture"),
])
def test_checker_reports_a_bad_include(tmp_path, path, text, message):
    problems, _ = check(write_tree(tmp_path, {**GOOD_TREE, path: text}))
    assert len(problems) == 1 and message in problems[0], problems


def test_checker_reports_a_function_defined_above_its_header(tmp_path):
    tree = {**GOOD_TREE,
            "src/filter/filter.h": "#pragma once\nPyObject *default_filter() noexcept;\n"
                                   "bool unlink(Window *r);\n",
            "src/filter/filter.cc": "bool unlink(Window *r) {\n  return true;\n}\n",
            # another function of the same name (another arity) above: not the same function
            "src/python/other.cc": "void unlink(Stack *s, Link *l) {\n}\n"}
    assert defined_above(write_tree(tmp_path, tree)) == []
    tree["src/python/filter_type.cc"] = ("namespace callsite {\n\nPyObject *default_filter() "
                                         "noexcept {\n  return nullptr;\n}\n\n}\n")
    assert defined_above(write_tree(tmp_path, tree)) == [
        "default_filter: declared in filter (layer 4), defined in src/python/filter_type.cc "
        "(layer 6)"]


def test_the_real_tree_fails_with_a_lower_declaration_defined_above(tmp_path):
    """The real sources with default_filter() defined in the Python layer again."""
    for folder, path in source_files(REPO):
        dst = tmp_path / path.relative_to(REPO)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(path.read_bytes())
    (tmp_path / "src" / "filter" / "default_filter.cc").unlink()
    planted = tmp_path / "src" / "python" / "filter_type.cc"
    planted.write_text(planted.read_text() + "\nnamespace callsite {\nPyObject *default_filter() "
                       "noexcept { return nullptr; }\n}  // namespace callsite\n")
    assert defined_above(tmp_path) == [
        "default_filter: declared in filter (layer 4), defined in src/python/filter_type.cc "
        "(layer 6)"]


def test_checker_accepts_one_stem_in_one_folder(tmp_path):
    tree = {**GOOD_TREE, "src/core/args.cc": '#include "core/args.h"\n'}
    assert shared_stems(write_tree(tmp_path, tree)) == []


@pytest.mark.parametrize("path", ["src/filter/args.h", "src/render/args.inc.h",
                                  "include/callsite/args.h"])
def test_checker_reports_a_stem_in_two_folders(tmp_path, path):
    found = shared_stems(write_tree(tmp_path, {**GOOD_TREE, path: "#pragma once\n"}))
    assert len(found) == 1 and found[0].startswith("args: ") and path in found[0], found


def test_checker_finds_a_folder_cycle_within_a_layer(tmp_path):
    tree = {**GOOD_TREE, "src/filter/uses_render.cc": '#include "render/text.cc"\n'}
    problems, graph = check(write_tree(tmp_path, tree))
    assert problems == []  # each include alone is allowed (same layer)...
    assert folder_cycle(graph) in (["filter", "render", "filter"], ["render", "filter", "render"])


def test_checker_finds_a_cycle_inside_a_folder(tmp_path):
    tree = {**GOOD_TREE, "src/mlir/a.h": "#pragma once\n", "src/mlir/b.h": "#pragma once\n",
            "src/mlir/a.cc": '#include "mlir/a.h"\n#include "mlir/b.h"\n',
            "src/mlir/b.cc": '#include "mlir/b.h"\n'}
    assert folder_cycle(stem_graph(write_tree(tmp_path, tree))) is None  # one way: allowed
    (tmp_path / "src/mlir/b.cc").write_text('#include "mlir/b.h"\n#include "mlir/a.h"\n')
    assert folder_cycle(stem_graph(tmp_path)) in (["mlir/a", "mlir/b", "mlir/a"],
                                                  ["mlir/b", "mlir/a", "mlir/b"])


def test_the_real_tree_fails_with_one_bad_include_added(tmp_path):
    """The real sources plus one upward include: the check must report exactly that one."""
    for folder, path in source_files(REPO):
        rel = path.relative_to(REPO)
        dst = tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(path.read_bytes())
    bad = tmp_path / "src" / "symbolize" / "symbolize.cc"
    bad.write_text('#include "python/frame_type.h"\n' + bad.read_text())
    problems, _ = check(tmp_path)
    assert problems == [
        'src/symbolize/symbolize.cc: #include "python/frame_type.h": symbolize (layer 2) '
        "includes python (layer 6), a higher layer"
    ]
