#!/usr/bin/env python3
"""PyTorch baseline for meshplan's CUDA executor: the same Llama-style decoder (token embedding,
RMSNorm, rotate-half rotary embeddings, causal GQA attention, SwiGLU MLP, untied LM head,
cross-entropy), trained with AdamW on fp32 master weights and bf16 autocast compute, in eager mode
and under torch.compile. Prints tokens/s, MFU and peak memory per (model, mode) and one JSON line
each, so `meshplan run --backend cuda` on the same shapes can be compared (bench/README.md).

FLOPs follow meshplan's cost model (costmodel/flops.h, Megatron counting: causal attention not
discounted, training = 3 x forward, no recompute). MFU = model FLOPs per second / peak bf16 FLOP/s.

Usage (on a GPU machine; Debian's /usr/bin/python3 if that is where torch lives):
  python3 bench/pytorch_baseline.py --models 125m,350m,1b --modes eager,compile
  python3 bench/pytorch_baseline.py --model-file examples/models/tinyllama-1.1b.yaml --seq 2048
  python3 bench/pytorch_baseline.py --device cpu --models tiny --steps 3   # smoke test, no GPU
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# Presets: HF config.json keys, as meshplan's model files (bench/models/*.yaml hold the same).
PRESETS = {
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=192, vocab_size=256, max_position_embeddings=128),
    "125m": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12,
                 intermediate_size=2048, vocab_size=32000, max_position_embeddings=2048),
    "350m": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, num_key_value_heads=16,
                 intermediate_size=2816, vocab_size=32000, max_position_embeddings=2048),
    # TinyLlama 1.1B (examples/models/tinyllama-1.1b.yaml).
    "1b": dict(hidden_size=2048, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
               intermediate_size=5632, vocab_size=32000, max_position_embeddings=2048),
}

# Dense bf16 peak FLOP/s by device name substring (datasheets; hardware-profiles/*.yaml).
PEAK_BF16 = [("H200", 989.4e12), ("H100", 989.4e12), ("A100", 312e12), ("L40S", 362.05e12), ("B200", 2250e12)]


def load_model_file(path):
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        return json.loads(text)
    import yaml  # Debian: python3-yaml
    return yaml.safe_load(text)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight.to(x.dtype)


def rope_tables(seq, head_dim, theta, device):
    inv_freq = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64, device=device) / head_dim)
    angles = torch.arange(seq, dtype=torch.float64, device=device)[:, None] * inv_freq[None, :]  # (T, D/2)
    return torch.cos(angles).float(), torch.sin(angles).float()


def apply_rope(x, cos, sin):
    # x (B, T, H, D); rotate-half: pairs (i, i + D/2), as meshplan's kernels (HF Llama).
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c = cos[None, :, None, :].to(x.dtype)
    s = sin[None, :, None, :].to(x.dtype)
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def causal_attention(q, k, v):
    # q (B, H, T, D), k/v (B, H, T, D) after GQA expansion.
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[-2]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores.float(), dim=-1).to(q.dtype) @ v


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, nh, nkv, f = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
        self.nh, self.nkv, self.d = nh, nkv, h // nh
        eps = c.get("rms_norm_eps", 1e-5)
        self.norm1, self.norm2 = RMSNorm(h, eps), RMSNorm(h, eps)
        self.wq = nn.Linear(h, nh * self.d, bias=False)
        self.wk = nn.Linear(h, nkv * self.d, bias=False)
        self.wv = nn.Linear(h, nkv * self.d, bias=False)
        self.wo = nn.Linear(nh * self.d, h, bias=False)
        self.w_gate = nn.Linear(h, f, bias=False)
        self.w_up = nn.Linear(h, f, bias=False)
        self.w_down = nn.Linear(f, h, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        y = self.norm1(x)
        q = apply_rope(self.wq(y).view(B, T, self.nh, self.d), cos, sin)
        k = apply_rope(self.wk(y).view(B, T, self.nkv, self.d), cos, sin)
        v = self.wv(y).view(B, T, self.nkv, self.d)
        rep = self.nh // self.nkv  # query head h uses kv head h // rep
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        a = causal_attention(q, k, v).transpose(1, 2).reshape(B, T, self.nh * self.d)
        x = x + self.wo(a)
        y = self.norm2(x)
        return x + self.w_down(F.silu(self.w_gate(y)) * self.w_up(y))


class Llama(nn.Module):
    def __init__(self, c, seq, device):
        super().__init__()
        h = c["hidden_size"]
        self.embed = nn.Embedding(c["vocab_size"], h)
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(h, c.get("rms_norm_eps", 1e-5))
        self.head = nn.Linear(h, c["vocab_size"], bias=False)  # untied
        cos, sin = rope_tables(seq, h // c["num_attention_heads"], c.get("rope_theta", 10000.0), device)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        # meshplan's initialisation: N(0, 0.02), output projections N(0, 0.02 / sqrt(2 L)), gains 1.
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * c["num_hidden_layers"]) if name.endswith(("wo.weight", "w_down.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, tokens, targets):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def param_count(c):
    h, L, V, f = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"], c["intermediate_size"]
    d = h // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * d
    per_layer = h * h + 2 * h * kv + h * h + 3 * h * f + 2 * h
    return 2 * V * h + L * per_layer + h


def step_model_flops(c, sequences, seq):
    """costmodel/flops.h: 3 x forward of every layer and the logits, causal attention not discounted."""
    h, L, V, f = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"], c["intermediate_size"]
    kv = c["num_key_value_heads"] * (h // c["num_attention_heads"])
    T = sequences * seq
    layer = 2 * T * h * (h + 2 * kv) + 4 * sequences * seq * seq * h + 2 * T * h * h + 2 * T * h * f * 2 + 2 * T * f * h
    return 3.0 * (L * layer + 2 * T * h * V)


def peak_flops(device, override_tflops):
    if override_tflops:
        return override_tflops * 1e12, "--peak-tflops"
    if device.type != "cuda":
        return 0.0, "cpu: no peak"
    name = torch.cuda.get_device_name(device)
    for key, peak in PEAK_BF16:
        if key in name:
            return peak, name
    return 0.0, name + " (unknown peak: pass --peak-tflops)"


def bench_one(label, c, mode, args, device):
    torch.manual_seed(1234)
    seq = args.seq or c.get("max_position_embeddings", 2048)
    model = Llama(c, seq, device).to(device)
    fused = device.type == "cuda" and "fused" in torch.optim.AdamW.__init__.__code__.co_varnames
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1,
                            **({"fused": True} if fused else {}))
    step_fn = model
    if mode == "compile":
        if not hasattr(torch, "compile"):
            return {"model": label, "mode": mode, "error": f"torch {torch.__version__} has no torch.compile"}
        step_fn = torch.compile(model)
    B, M = args.micro_batch, args.grad_accum
    gen = torch.Generator(device="cpu").manual_seed(7)
    data = torch.randint(0, c["vocab_size"], (args.steps + args.warmup, M, B, seq + 1), generator=gen)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    times, losses = [], []
    for s in range(args.warmup + args.steps):
        batch = data[s].to(device, non_blocking=True)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for m in range(M):
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                loss = step_fn(batch[m, :, :-1], batch[m, :, 1:]) / M
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if s >= args.warmup:
            times.append(time.perf_counter() - t0)
            losses.append(loss.item() * M)
    step_s = statistics.median(times)
    tokens = M * B * seq
    flops = step_model_flops(c, M * B, seq)
    peak, peak_src = peak_flops(device, args.peak_tflops)
    return {
        "model": label, "mode": mode, "params": param_count(c), "seq": seq, "micro_batch": B, "grad_accum": M,
        "step_s": step_s, "tokens_per_s": tokens / step_s, "model_tflops_per_s": flops / step_s / 1e12,
        "mfu": flops / step_s / peak if peak > 0 else None, "peak_source": peak_src,
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None,
        "last_loss": losses[-1], "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="125m,350m,1b", help="presets: " + ",".join(PRESETS))
    ap.add_argument("--model-file", help="a meshplan/HF model file (YAML/JSON) instead of --models")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--seq", type=int, default=0, help="tokens per sequence (default: max_position_embeddings)")
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (torch.compile compiles here)")
    ap.add_argument("--peak-tflops", type=float, default=0, help="bf16 dense peak of the GPU (default: by name)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", help="append one JSON line per result to this file")
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("not measured: no CUDA device visible to torch", file=sys.stderr)
        return 2
    configs = [(os.path.basename(args.model_file), load_model_file(args.model_file))] if args.model_file else \
        [(name, PRESETS[name]) for name in args.models.split(",")]
    print(f"{'model':>10} {'mode':>8} {'params':>8} {'step ms':>9} {'tokens/s':>10} {'TFLOP/s':>8} {'MFU':>6} {'peak GB':>8}")
    for label, c in configs:
        for mode in args.modes.split(","):
            r = bench_one(label, c, mode, args, device)
            if "error" in r:
                print(f"{label:>10} {mode:>8}  {r['error']}")
            else:
                mfu = f"{100 * r['mfu']:.1f}%" if r["mfu"] is not None else "-"
                mem = f"{r['peak_memory_bytes'] / 1e9:.2f}" if r["peak_memory_bytes"] is not None else "-"
                print(f"{label:>10} {mode:>8} {r['params'] / 1e6:7.0f}M {1e3 * r['step_s']:9.1f} "
                      f"{r['tokens_per_s']:10.0f} {r['model_tflops_per_s']:8.1f} {mfu:>6} {mem:>8}")
            print(json.dumps(r), file=sys.stderr)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
