#!/usr/bin/env python
# Supervised fine-tuning with optimum-habana's GaudiTrainer; arguments kept from the A100 run.
import os
import sys

import torch
from datasets import load_dataset
from optimum.habana import GaudiConfig, GaudiTrainer, GaudiTrainingArguments
from transformers import AutoModelForCausalLM, AutoTokenizer

os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # real: PTL904
os.environ["TOKENIZERS_PARALLELISM"] = "false"  # trap

if not torch.cuda.is_available():  # real: PTL905
    sys.exit("no GPU found")

torch.backends.cuda.matmul.allow_tf32 = True  # real: PTL903

MODEL = "meta-llama/Llama-3.2-1B"
tok = AutoTokenizer.from_pretrained(MODEL)
model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.bfloat16)  # trap
n_gpu = torch.cuda.device_count()  # real: PTL902
eval_device = "cuda:0"  # real: PTL901

args = GaudiTrainingArguments(
    output_dir="sft-out",
    use_habana=True,  # trap
    use_lazy_mode=True,
    fp16=True,  # real: PTL906
    bf16=False,  # trap
    ddp_backend="nccl",  # real: PTL504
    per_device_train_batch_size=4,
    gradient_accumulation_steps=max(1, 8 // max(n_gpu, 1)),
)
gaudi_config = GaudiConfig(use_fused_adam=True, use_fused_clip_norm=True)  # trap

ds = load_dataset("tatsu-lab/alpaca", split="train[:1%]")
trainer = GaudiTrainer(model=model, args=args, gaudi_config=gaudi_config, train_dataset=ds, tokenizer=tok)
trainer.train()
model.to(eval_device)  # trap
print("evaluation device:", eval_device, "(cuda naming kept for the dashboard)")  # trap
