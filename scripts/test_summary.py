"""scripts/test_summary.py — the table closing a scripts/test.sh run: one row per suite found under
RESULTS/<tox environment>/ (a JUnit XML, pytest's exit status in .rc, a skip's reason in .skipped),
with tox's verdict on each environment (RESULTS/tox.json, tox's --result-json).

Usage: python scripts/test_summary.py RESULTS
Exits 1 if anything failed (an environment tox failed counts once at least) or no test ran."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

RC_NOTES = {"5": "NO TESTS COLLECTED (rc=5): the suite is broken", "124": "TIMED OUT"}


def counts(xml):
    """(passed, failed, skipped) of a pytest or ctest JUnit XML."""
    p = f = s = 0
    for case in ET.parse(xml).getroot().iter("testcase"):
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            f += 1
        elif "skipped" in tags or case.get("status") in ("notrun", "disabled"):
            s += 1
        else:
            p += 1
    return p, f, s


def suites(folder):
    """The stems of the results in folder: pytest-py3.11 for pytest-py3.11.{xml,rc,skipped}."""
    return sorted({f.stem for f in folder.iterdir() if f.suffix in (".xml", ".rc", ".skipped")})


def rows(results):
    try:
        envs = json.loads((results / "tox.json").read_text())["testenvs"]
    except (OSError, ValueError, KeyError):
        envs = {}
    # tox's environments in its order, then any other folder of results.
    for name in [*envs, *sorted(d.name for d in results.iterdir() if d.is_dir() and d.name not in envs)]:
        folder, result = results / name, envs.get(name, {}).get("result", {})
        code = result.get("exit_code")
        where = f"{result.get('duration', 0):.0f} s, build/test-results/{name}/"
        stems = suites(folder) if folder.is_dir() else []
        env_failed = 0
        for stem in stems:
            label = name if len(stems) == 1 else f"{name} {stem.removeprefix('pytest-')}"
            skipped = folder / f"{stem}.skipped"
            if skipped.exists():
                yield label, None, f"skipped: {skipped.read_text().strip()}"
                continue
            p, f, s = counts(folder / f"{stem}.xml") if (folder / f"{stem}.xml").exists() else (0, 0, 0)
            rc = (folder / f"{stem}.rc").read_text().strip() if (folder / f"{stem}.rc").exists() else None
            note = where
            if rc == "1" and f:
                note = f"{f} tests failed, {where}"
            elif rc not in (None, "0"):
                note = RC_NOTES.get(rc, f"pytest exited rc={rc} (crash, interrupt or usage error)")
                f += 1
            env_failed += f
            yield label, (p, f, s), note
        # A failure no suite recorded: a set-up or build, a crash before any result.
        if code not in (None, 0) and not env_failed:
            yield name, (0, 1, 0), f"tox: exit code {code} ({where}; its output above)"


def main():
    results = pathlib.Path(sys.argv[1])
    table = list(rows(results)) if results.is_dir() else []
    total = [0, 0, 0]
    print("\n==================== callsite test summary ====================")
    print(f"{'suite':<22} {'passed':>7} {'failed':>7} {'skipped':>7}  note")
    for label, numbers, note in table:
        shown = numbers or ("-", "-", "-")
        print(f"{label:<22} {shown[0]:>7} {shown[1]:>7} {shown[2]:>7}  {note}")
        if numbers:
            total = [t + n for t, n in zip(total, numbers)]
    if not sum(total):
        print("no test ran")
    print(f"\n{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 0 if sum(total) and not total[1] else 1


if __name__ == "__main__":
    sys.exit(main())
