"""Which frame walk capture() uses: callsite's internal walk of CPython's frames, or the
public C API walk (the fallback; same results, slower)."""
from . import _callsite

TYPE_CHECKING = False  # typing costs a millisecond at import; type checkers treat this as True
if TYPE_CHECKING:
    from typing import Literal

BACKENDS = ("internal", "public")


def get_backend() -> "Literal['internal', 'public']":
    """The frame walk in use: 'internal' (CPython's frames read directly) or 'public'.

    Example:
        ::

            import callsite

            print(callsite.get_backend())            # 'internal' where the layout matched
    """
    return _callsite.get_backend()


def set_backend(name: "Literal['internal', 'public']") -> None:
    """Selects the frame walk for every thread: 'internal' or 'public'.

    Raises:
        TypeError: ``name`` is not a ``str``, as in ``callsite.set_backend(42)``.
        ValueError: ``name`` is not ``'internal'`` or ``'public'``, as in
            ``callsite.set_backend("fast")``.
        RuntimeError: ``'internal'`` where the internal walk is refused
            (:func:`callsite.internal_backend_refusal` says why).

    Example:
        ::

            import callsite

            previous = callsite.get_backend()
            callsite.set_backend("public")           # CPython's public C API walk: same results
            print(callsite.capture()[0].lineno)
            callsite.set_backend(previous)
    """
    if not isinstance(name, str):
        raise TypeError(f"set_backend(): name must be a str ('internal' or 'public'), "
                        f"not {type(name).__name__}")
    if name not in BACKENDS:
        raise ValueError(f"set_backend(): name must be 'internal' or 'public', not {name!r}")
    _callsite.set_backend(name)


def internal_backend_refusal() -> "str | None":
    """Why the internal walk is unavailable in this process, or None when it is available.

    Example:
        ::

            import callsite

            print(callsite.internal_backend_refusal())  # None where the internal walk is in use
    """
    return _callsite.internal_backend_refusal()
