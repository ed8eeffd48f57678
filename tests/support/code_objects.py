"""Code objects to compare callsite's per-code-object caches with CPython's own answers."""
import sys
import types


def code_of(value):
    """The code of a function or method, read without a lookup that could run a module's or an
    object's own __getattr__ (torch.backends.cuda's initialises CUDA, and raises without it)."""
    kind = type(value)  # not isinstance(), which asks the object for its __class__
    if issubclass(kind, (types.MethodType, classmethod, staticmethod)):
        value = value.__func__
        kind = type(value)
    return value.__code__ if issubclass(kind, types.FunctionType) else None


def all_code_objects(limit_modules=None):
    """Code objects of every loaded module (recursively through co_consts)."""
    seen = set()
    stack = []
    for mod in list(sys.modules.values())[:limit_modules]:
        for value in list(vars(mod).values()) if hasattr(mod, "__dict__") else []:
            code = code_of(value)
            if code is not None:
                stack.append(code)
            for attr in vars(value).values() if issubclass(type(value), type) else ():
                fcode = code_of(attr)
                if fcode is not None:
                    stack.append(fcode)
    while stack:
        code = stack.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        yield code
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
