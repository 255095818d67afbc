import timm
from timm.utils import NativeScaler
from timm.data import create_loader
from timm.data.random_erasing import RandomErasing

model = timm.create_model("resnet50")
loss_scaler = NativeScaler(device="npu")
loss_scaler(loss, optimizer)  # __call__ does no CUDA work in 1.0.31
eraser = RandomErasing(0.25, device="npu")
loader = create_loader(dataset, (3, 224, 224), 64, use_prefetcher=True)  # npu-aware in 1.0.31


def NativeScalerLike():
    return None


scaler = NativeScalerLike()
