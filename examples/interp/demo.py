"""examples/interp/demo.py — run program.calc with Python callbacks and show where callsite
says we are. Uses the standalone `calc` module if built (see CMakeLists.txt), else the private
copy the callsite package builds as callsite._calc (`python -m callsite demo` shows the same)."""
import pathlib
import traceback

import callsite

try:
    from calc import Program
except ImportError:
    from callsite._calc import Program

source = pathlib.Path(__file__).with_name("program.calc")


captured = []


def scale(a):
    if a > 10 and not captured:
        captured.append(True)
        print("captured in scale():")
        for frame in callsite.capture():
            print(f"  [{frame.kind:6}] {frame}")
    return a * 2


def check(total):
    raise ValueError(f"total {total} is over budget")


program = Program(source.read_text(), str(source), {"scale": scale, "check": check})
print("total(3) =", program.call("total", 3))
try:
    program.call("total", 20)
except ValueError:
    traceback.print_exc()

# visible=True: the interpreted calls are real interpreter frames, so tools that never call
# callsite — faulthandler, traceback.print_stack, py-spy — list the program's line between the
# Python frames (3.12/3.13; elsewhere a RuntimeWarning and shadow-only frames).
import faulthandler  # noqa: E402
import sys  # noqa: E402

shown = []


def show_stack(a):
    if not shown:
        shown.append(True)
        print("\nfaulthandler.dump_traceback() in scale(), visible frames:", flush=True)
        faulthandler.dump_traceback(sys.stdout, all_threads=False)
        print("\ntraceback.print_stack() in scale(), visible frames:")
        traceback.print_stack(file=sys.stdout)
    return a * 2


visible = Program(source.read_text(), str(source), {"scale": show_stack, "check": check},
                  visible=True)
print("total(3) =", visible.call("total", 3))
