import deepspeed
from lightning.pytorch.strategies import DDPStrategy
from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", ddp_backend="hccl")  # expect: DST008
deepspeed.init_distributed(dist_backend='hccl')  # expect: DST008
strategy = DDPStrategy(process_group_backend="hccl")  # expect: DST008
config = {
    "ddp_backend": "hccl",  # expect: DST008
    "fp16": True,
}
