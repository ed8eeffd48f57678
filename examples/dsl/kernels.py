"""kernels — the user's code: what every op's location should point at."""
from .helpers import horner, square
from .tinydsl import const, fori, kernel


@kernel
def axpy(a, x, y):
    return a * x + y


@kernel
def sum_of_squares(n):
    return fori(0, n, 0, lambda i, acc: acc + square(i))


@kernel
def poly(x):
    y = horner(x, [3, 0, 2])  # 3 + 2x²
    return axpy(x, y, const(1)) + square(x)


KERNELS = [axpy, sum_of_squares, poly]
