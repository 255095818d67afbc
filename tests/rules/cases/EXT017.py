# Without a pin the newest summarised timm release is used (1.0.31): its NativeScaler and
# RandomErasing default to device="cuda"; its loaders handle the NPU (see tests/libsum for pins).
from timm.utils import NativeScaler
from timm.data.random_erasing import RandomErasing
import timm.layers.fast_norm as fast_norm

loss_scaler = NativeScaler()  # expect: EXT017
eraser = RandomErasing(0.25)  # expect: EXT017
dtype = fast_norm.get_autocast_dtype()  # expect: EXT017
