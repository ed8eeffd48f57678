"""callsite's warning categories: filter them with ``warnings.filterwarnings(category=...)``."""


class CallsiteWarning(UserWarning):
    """Base class of every warning callsite issues.

    Example:
        ::

            import warnings
            import callsite

            warnings.filterwarnings("ignore", category=callsite.CallsiteWarning)  # all of callsite's
    """


class BackendWarning(CallsiteWarning, RuntimeWarning):
    """The internal frame walk was refused at import; the public C API walk is used instead
    (slower, same results). ``callsite.internal_backend_refusal()`` says why.

    Example:
        ::

            import warnings
            import callsite

            print(issubclass(callsite.BackendWarning, callsite.CallsiteWarning))
            warnings.simplefilter("error", callsite.BackendWarning)   # make a refused walk fatal
    """
