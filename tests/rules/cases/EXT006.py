import triton  # expect: EXT006
import triton.language as tl  # same package as line 1: not reported again


@triton.autotune(configs=[], key=["n"])  # expect: EXT006
@triton.jit  # same kernel: reported once, at the first decorator
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs), mask=offs < n)
