from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", ddp_backend="hccl")
args = TrainingArguments(output_dir="out")
config = {"backend": "nccl", "ddp_backend": None}
