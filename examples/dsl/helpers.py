"""helpers — a helper library the kernels use. The demo excludes this file by a rule, so the
ops built in here are attributed to the kernel line that called the helper."""


def square(x):
    return x * x


def horner(x, coefficients):
    """c0 + x*(c1 + x*(c2 + ...)), one multiply-add per coefficient."""
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x + c
    return acc
