"""The user's module that runs guest code: it pushes the native frames, and is imported through
CPython's ordinary source loader (not pytest's), as an interpreter's own module is. Its source
is what a tool that took a guest frame's globals from the pusher would show as guest lines."""
from callsite import native


def run_in(form, exe, callback, state=1):
    """Runs `callback` inside a frame of `exe` at `state`: the with block, or the decorator
    (visible for a visible executable)."""
    if form == "with":
        with exe.frame(state):
            return callback()
    return native.frame(exe, state)(callback)()
