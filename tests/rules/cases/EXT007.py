import cupy as cp  # expect: EXT007
import pycuda.autoinit  # expect: EXT007
from numba import cuda  # expect: EXT007
import numba


@numba.cuda.jit  # expect: EXT007
def scale(a, f):
    i = numba.cuda.grid(1)
    a[i] *= f
