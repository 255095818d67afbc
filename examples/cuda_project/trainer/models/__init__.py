from .resnet import ResNet, resnet_tiny
from .vit import VisionTransformer, vit_tiny


def build_model(name, num_classes=10, image_size=32):
    if name == "resnet":
        return resnet_tiny(num_classes=num_classes)
    if name == "vit":
        return vit_tiny(num_classes=num_classes, image_size=image_size)
    raise ValueError(f"unknown model {name!r} (choose resnet or vit)")


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


__all__ = ["ResNet", "VisionTransformer", "build_model", "count_parameters", "resnet_tiny", "vit_tiny"]
