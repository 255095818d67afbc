import numba
import numpy as np
from numba import njit


@njit
def total(a):
    return a.sum()


@numba.jit(nopython=True)
def twice(a):
    return a * 2


print(total(np.ones(3)))
