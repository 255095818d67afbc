from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="det",
    ext_modules=[CUDAExtension("det._C", ["det/csrc/nms.cpp", "det/csrc/nms_kernel.cu"])],  # expect: EXT001
    cmdclass={"build_ext": BuildExtension},
)
