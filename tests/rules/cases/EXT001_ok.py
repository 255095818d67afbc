from setuptools import setup
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="ops",
    ext_modules=[CppExtension("nms_cpu", ["csrc/nms.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
act = cpp_extension.load(name="act", sources=["act.cpp"])
inline = cpp_extension.load_inline("inl", cpp_sources="int f() { return 1; }", cuda_sources=None)
notes = "see kernel.cu for the CUDA version"
