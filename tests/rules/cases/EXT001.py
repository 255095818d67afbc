import glob

from setuptools import setup
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

KERNELS = ["csrc/nms.cpp", "csrc/nms_kernel.cu"]

setup(
    name="ops",
    ext_modules=[
        CUDAExtension("roi_align_cuda", ["roi_align.cpp", "roi_align_kernel.cu"]),  # expect: EXT001
        CppExtension("nms", KERNELS),  # expect: EXT001
        CppExtension("fused", glob.glob("csrc/*.cpp") + glob.glob("csrc/*.cu")),  # expect: EXT001
    ],
    cmdclass={"build_ext": BuildExtension},
)

act = cpp_extension.load(name="act", sources=["act.cpp", "act_kernel.cuh"])  # expect: EXT001
inline = cpp_extension.load_inline("inl", cpp_sources="", cuda_sources="__global__ void k() {}")  # expect: EXT001
