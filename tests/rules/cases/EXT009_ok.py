from transformers import AutoModelForCausalLM

a = AutoModelForCausalLM.from_pretrained("m", device_map="auto")
b = AutoModelForCausalLM.from_pretrained("m", device_map="npu:0")
c = AutoModelForCausalLM.from_pretrained("m", device_map={"": 0})
d = AutoModelForCausalLM.from_pretrained("m", device_map="cpu")
