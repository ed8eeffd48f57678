"""callsite's warning categories: filter them with ``warnings.filterwarnings(category=...)``."""


class CallsiteWarning(UserWarning):
    """Base class of every warning callsite issues."""


class BackendWarning(CallsiteWarning, RuntimeWarning):
    """The internal frame walk was refused at import; the public C API walk is used instead
    (slower, same results). ``callsite.internal_backend_refusal()`` says why."""
