"""examples/interpreters/treewalk.py, the end-to-end example of docs/native.md ("For
interpreter authors"), runs as written: a recursive guest function whose program is held in
memory shows, in CPython's own traceback summary, each guest frame at its line with the
program's own source line and each activation's own variables."""
import importlib.util

from where import REPO

_spec = importlib.util.spec_from_file_location(
    "callsite_examples_treewalk", REPO / "examples" / "interpreters" / "treewalk.py")
treewalk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(treewalk)


def test_the_example_prints_the_guest_frames_with_source_and_variables(capsys):
    assert treewalk.main() == 0
    out = capsys.readouterr().out.splitlines()
    lines = treewalk.PROGRAM.replace("fact 5", "fact 3").splitlines()

    def at(line, name, variables):
        return f"{treewalk.FILENAME}:{line} in {name}: {lines[line - 1].strip()}  {variables}"

    recurse = next(i for i, text in enumerate(lines, 1) if "(fact (- n 1))" in text)
    check = next(i for i, text in enumerate(lines, 1) if "(check n)" in text)
    program = next(i for i, text in enumerate(lines, 1) if "(print" in text)
    assert out == ["120",
                   at(program, "<program>", None),  # no variables: FrameSummary says None
                   at(recurse, "fact", {"n": "3"}),
                   at(recurse, "fact", {"n": "2"}),
                   at(check, "fact", {"n": "1"})]
