"""Throughput benchmark for an encoder compiled with torch-neuronx (inf2/trn1).
Ported from a CUDA benchmark; the timing and collective helpers were copied as-is."""
import argparse
import statistics

import torch
import torch.distributed as dist
import torch_neuronx
from cupy.cuda import nccl  # real: PTL501
from transformers import AutoModel, AutoTokenizer


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bert-base-uncased")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--device", default="neuron")  # trap
    return ap.parse_args()


def compile_model(name):
    tok = AutoTokenizer.from_pretrained(name)
    model = AutoModel.from_pretrained(name, torchscript=True).eval()
    example = tok("hello world", return_tensors="pt", padding="max_length", max_length=128)
    traced = torch_neuronx.trace(model, (example["input_ids"], example["attention_mask"]))
    return tok, traced


def time_once(model, inputs):
    start = torch.cuda.Event(enable_timing=True)  # real: PTL902
    end = torch.cuda.Event(enable_timing=True)  # real: PTL902
    start.record()
    with torch.cuda.amp.autocast():  # real: PTL902
        model(*inputs)
    end.record()
    torch.cuda.synchronize()  # real: PTL902
    return start.elapsed_time(end)


def gather_latencies(latencies):
    if not dist.is_initialized():
        return latencies
    pg_options = dist.ProcessGroupNCCL.Options()  # real: PTL504
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, latencies)
    return [x for part in out for x in part]


def main():
    args = parse()
    tok, model = compile_model(args.model)
    enc = tok("a benchmark sentence", return_tensors="pt", padding="max_length", max_length=128)
    inputs = (enc["input_ids"], enc["attention_mask"])
    latencies = [time_once(model, inputs) for _ in range(args.runs)]
    latencies = gather_latencies(latencies)
    print(f"p50 {statistics.median(latencies):.2f} ms over {len(latencies)} runs (not cuda)")  # trap
    if "cuda" in args.device:  # trap
        print("note: CUDA numbers are not comparable")


if __name__ == "__main__":
    main()
