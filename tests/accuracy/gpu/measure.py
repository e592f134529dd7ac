#!/usr/bin/env python3
"""measure.py - peak GPU memory of real training and serving steps of
Llama-shaped models, for advisor's memory model (issue 19, "Measured on a
GPU").

Builds transformers' LlamaForCausalLM from a LlamaConfig with random
weights (no download), bf16, and for each planned case runs real steps:
training with AdamW (gradient checkpointing on or off), or one forward
pass without gradients (the serving case).  It records
torch.cuda.max_memory_allocated() and max_memory_reserved(), the torch
version and the GPU's name into tests/accuracy/measured-<gpu>.json, one
row per counter, in the row format tests/accuracy/memaccuracy.c reads
(group training-peak; the forward-only case is recorded as a training-peak
row with seq and micro_batch and "task": "infer" in its notes, which the
checker does not judge yet).

usage: measure.py [--dry-run] [--out FILE] [--steps N] [--only SUBSTRING]

Without CUDA it refuses (exit 2) unless --dry-run, which prints the
planned cases.  UNRUN so far: no GPU was lent to the session that wrote it.
"""
import argparse
import json
import sys

# (name, layers, hidden, heads, kv_heads, ffn, vocab): Llama-shaped models
# from 0.5B to 8B parameters (Llama 3 8B's own shape last).
MODELS = [
    ("llama-0.5b", 16, 1536, 12, 4, 4096, 128256),
    ("llama-1b", 16, 2048, 32, 8, 8192, 128256),
    ("llama-3b", 28, 3072, 24, 8, 8192, 128256),
    ("llama-8b", 32, 4096, 32, 8, 14336, 128256),
]
SEQS = [2048, 4096, 8192]
MICRO_BATCHES = [1, 2, 4]
GIB = 1024.0 ** 3


def cases():
    """The planned cases: training over model x seq x micro-batch x
    checkpointing (the 8B model only at micro-batch 1 without checkpointing
    above 2K: it would not fit an 80 GB GPU), and one forward-only serving
    case per model at 8K."""
    out = []
    for name, *_ in MODELS:
        for seq in SEQS:
            for mbs in MICRO_BATCHES:
                for ckpt in (False, True):
                    if name == "llama-8b" and not ckpt and seq * mbs > 2048:
                        continue
                    out.append({"model": name, "task": "train", "seq": seq,
                                "micro_batch": mbs, "checkpointing": ckpt})
        out.append({"model": name, "task": "infer", "seq": 8192, "micro_batch": 1,
                    "checkpointing": False})
    return out


def arch(name):
    for n, layers, hidden, heads, kv, ffn, vocab in MODELS:
        if n == name:
            return {"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv,
                    "ffn_hidden": ffn, "vocab": vocab, "mlp": "swiglu", "tied": False,
                    "source": "tests/accuracy/gpu/measure.py MODELS (LlamaConfig)"}
    raise KeyError(name)


def run_case(torch, transformers, case, steps):
    a = arch(case["model"])
    cfg = transformers.LlamaConfig(
        vocab_size=a["vocab"], hidden_size=a["hidden"], intermediate_size=a["ffn_hidden"],
        num_hidden_layers=a["layers"], num_attention_heads=a["heads"],
        num_key_value_heads=a["kv_heads"], max_position_embeddings=max(SEQS),
        tie_word_embeddings=False, attn_implementation="sdpa", torch_dtype=torch.bfloat16)
    torch.cuda.empty_cache()
    model = transformers.LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, a["vocab"], (case["micro_batch"], case["seq"]), device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    if case["task"] == "infer":
        model.eval()
        with torch.no_grad():
            model(input_ids=ids, use_cache=False)
    else:
        if case["checkpointing"]:
            model.gradient_checkpointing_enable()
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        for _ in range(steps):
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = {"allocated": torch.cuda.max_memory_allocated(),
            "reserved": torch.cuda.max_memory_reserved()}
    del model
    torch.cuda.empty_cache()
    return peak


def rows_of(case, peak, gpu, torch_version):
    ident = "GPU-%s-%s-S%d-MB%d%s" % (case["model"], case["task"], case["seq"],
                                       case["micro_batch"],
                                       "-CKPT" if case["checkpointing"] else "")
    out = []
    for counter in ("allocated", "reserved"):
        out.append({
            "id": "%s-%s" % (ident.upper(), counter[:5].upper()),
            "group": "training-peak",
            "framework": "PyTorch %s, transformers LlamaForCausalLM (one GPU)" % torch_version,
            "url": "tests/accuracy/gpu/measure.py",
            "figure": peak[counter],
            "unit": "bytes",
            "measure": "%s (torch.cuda.max_memory_%s)" % (counter, counter),
            "model": case["model"], "catalog_model": None, "arch": arch(case["model"]),
            "gpu": gpu, "gpu_key": None, "num_gpus": 1, "tp": 1, "pp": 1, "cp": 1,
            "zero_fsdp": "none (single GPU)", "precision": "bf16",
            "seq": case["seq"], "micro_batch": case["micro_batch"],
            "recompute": "full" if case["checkpointing"] else "none",
            "assumed": {},
            "notes": "task %s; AdamW, bf16 parameters and gradients (no fp32 master copy); "
                     "SDPA attention." % case["task"],
        })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the planned cases and exit")
    ap.add_argument("--out", help="output file (default tests/accuracy/measured-<gpu>.json)")
    ap.add_argument("--steps", type=int, default=2, help="optimizer steps per training case")
    ap.add_argument("--only", default="", help="run only cases whose model name contains this")
    args = ap.parse_args()
    plan = [c for c in cases() if args.only in c["model"]]
    if args.dry_run:
        for c in plan:
            print("%-11s %-5s seq %5d  micro-batch %d  checkpointing %s" % (
                c["model"], c["task"], c["seq"], c["micro_batch"],
                "on" if c["checkpointing"] else "off"))
        print("%d cases" % len(plan))
        return 0
    try:
        import torch
        import transformers
    except ImportError as e:
        print("measure.py: needs PyTorch and transformers (%s)" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("measure.py: no CUDA device; nothing measured (use --dry-run to see the plan)",
              file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0)
    key = "".join(ch if ch.isalnum() else "-" for ch in gpu.lower()).strip("-")
    out = args.out or "tests/accuracy/measured-%s.json" % key
    rows = []
    for c in plan:
        try:
            peak = run_case(torch, transformers, c, args.steps)
        except torch.cuda.OutOfMemoryError:
            print("measure.py: %s: out of memory, skipped" % c, file=sys.stderr)
            torch.cuda.empty_cache()
            continue
        rows.extend(rows_of(c, peak, gpu, torch.__version__))
        print("%s: allocated %.2f GiB, reserved %.2f GiB" % (
            rows[-1]["id"][:-6], peak["allocated"] / GIB, peak["reserved"] / GIB), flush=True)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)
    print("measure.py: %d rows in %s" % (len(rows), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
