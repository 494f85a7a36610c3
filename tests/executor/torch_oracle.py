#!/usr/bin/env python3
"""External oracle for meshplan's executor: the same Llama model in PyTorch (float64, CPU).

Usage: torch_oracle.py model DIR   reads DIR/config.txt, DIR/params/<name>.bin, DIR/tokens.bin;
                                   writes DIR/torch_losses.txt and DIR/torch_grads/<name>.bin
       torch_oracle.py adamw DIR   reads DIR/config.txt, DIR/params/, DIR/grads/; runs
                                   torch.optim.AdamW for `steps` steps with those gradients and
                                   writes DIR/torch_params/<name>.bin
Binary files are raw little-endian float32 (tokens: int32), shapes listed in DIR/manifest.txt.
Conventions mirror executor/backend.h: RMSNorm x*rsqrt(mean(x^2)+eps)*w, rotary "rotate half"
with position t and frequency theta^(-2i/D), causal GQA where query head h uses kv head
h // (NH/NKV), SwiGLU silu(x Wg^T) * (x Wu^T) Wd^T, untied LM head, mean cross-entropy.
MoE layers (config num_experts > 0, layers >= first_dense_layers): softmax router over E experts,
top-k, gates renormalised over the chosen k (Hugging Face MixtralSparseMoeBlock), SwiGLU experts
stacked as expert_gate/up (E*Fe, C) and expert_down (E*C, Fe), computed densely here.
"""
import os
import sys

import torch
import torch.nn.functional as F

DT = torch.float64


def read_config(d):
    cfg = {}
    with open(os.path.join(d, "config.txt")) as f:
        for line in f:
            key, value = line.split()
            cfg[key] = float(value) if "." in value or "e" in value else int(value)
    return cfg


def read_manifest(d):
    shapes = {}
    with open(os.path.join(d, "manifest.txt")) as f:
        for line in f:
            parts = line.split()
            shapes[parts[0]] = [int(x) for x in parts[1:]]
    return shapes


def read_f32(path, shape):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    return torch.frombuffer(data, dtype=torch.float32).to(DT).reshape(shape)


def write_f32(path, t):
    with open(path, "wb") as f:
        f.write(t.detach().to(torch.float32).contiguous().numpy().tobytes())


def rmsnorm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, theta):  # x (B, T, H, D)
    B, T, H, D = x.shape
    inv_freq = theta ** (-torch.arange(0, D // 2, dtype=DT) * 2.0 / D)
    angle = torch.arange(T, dtype=DT)[:, None] * inv_freq[None, :]  # (T, D/2)
    cos = torch.cat([angle.cos(), angle.cos()], -1)[None, :, None, :]
    sin = torch.cat([angle.sin(), angle.sin()], -1)[None, :, None, :]
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


def attention(q, k, v, nh, nkv):  # q (B, T, NH, D), k v (B, T, NKV, D)
    B, T, _, D = q.shape
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
    k = k.repeat_interleave(nh // nkv, dim=1)
    v = v.repeat_interleave(nh // nkv, dim=1)
    scores = q @ k.transpose(-1, -2) / (D ** 0.5)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    out = scores.softmax(-1) @ v  # (B, NH, T, D)
    return out.transpose(1, 2).reshape(B, T, nh * D)


def moe(h, w, cfg):  # h (B, T, C)
    E, k = cfg["num_experts"], cfg["experts_per_token"]
    C = h.shape[-1]
    Fe = w("expert_gate").shape[0] // E
    probs = (h @ w("router").T).softmax(-1)  # (B, T, E)
    top_p, top_i = probs.topk(k, dim=-1)
    gates = top_p / top_p.sum(-1, keepdim=True)
    out = torch.zeros_like(h)
    for e in range(E):
        wg = w("expert_gate")[e * Fe:(e + 1) * Fe]
        wu = w("expert_up")[e * Fe:(e + 1) * Fe]
        wd = w("expert_down")[e * C:(e + 1) * C]
        weight = (gates * (top_i == e)).sum(-1, keepdim=True)  # 0 where e was not chosen
        out = out + weight * ((F.silu(h @ wg.T) * (h @ wu.T)) @ wd.T)
    return out


def is_moe_layer(cfg, l):
    first = cfg.get("first_dense_layers", 0)
    return cfg.get("num_experts", 0) > 0 and l >= first and (l - first) % cfg.get("layer_freq", 1) == 0


def forward(p, cfg, tokens, targets):
    L, nh, nkv = cfg["num_layers"], cfg["num_heads"], cfg["num_kv_heads"]
    C = cfg["hidden_size"]
    D = C // nh
    eps, theta = cfg["norm_eps"], cfg["rope_theta"]
    B, T = tokens.shape
    x = p["embedding"][tokens]  # (B, T, C)
    for l in range(L):
        w = lambda n: p[f"layers.{l}.{n}"]
        h = rmsnorm(x, w("attn_norm"), eps)
        q = rope((h @ w("wq").T).reshape(B, T, nh, D), theta)
        k = rope((h @ w("wk").T).reshape(B, T, nkv, D), theta)
        v = (h @ w("wv").T).reshape(B, T, nkv, D)
        x = x + attention(q, k, v, nh, nkv) @ w("wo").T
        h = rmsnorm(x, w("mlp_norm"), eps)
        if is_moe_layer(cfg, l):
            x = x + moe(h, w, cfg)
        else:
            x = x + (F.silu(h @ w("w_gate").T) * (h @ w("w_up").T)) @ w("w_down").T
    logits = rmsnorm(x, p["final_norm"], eps) @ p["lm_head"].T
    return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1))


def run_model(d):
    cfg, shapes = read_config(d), read_manifest(d)
    p = {n: read_f32(os.path.join(d, "params", n + ".bin"), s).requires_grad_() for n, s in shapes.items()}
    M, B, T = cfg["micro_batches"], cfg["batch"], cfg["seq_len"]
    with open(os.path.join(d, "tokens.bin"), "rb") as f:
        tok = torch.frombuffer(bytearray(f.read()), dtype=torch.int32).to(torch.long).reshape(M, B, T + 1)
    losses = []
    total = 0
    for m in range(M):  # gradient accumulation: mean over micro-batches
        loss = forward(p, cfg, tok[m, :, :T], tok[m, :, 1:])
        losses.append(loss.item())
        total = total + loss / M
    total.backward()
    with open(os.path.join(d, "torch_losses.txt"), "w") as f:
        f.write("\n".join(repr(l) for l in losses) + "\n")
    os.makedirs(os.path.join(d, "torch_grads"), exist_ok=True)
    for n, t in p.items():
        write_f32(os.path.join(d, "torch_grads", n + ".bin"), t.grad)


def run_adamw(d):
    cfg, shapes = read_config(d), read_manifest(d)
    p = {n: read_f32(os.path.join(d, "params", n + ".bin"), s) for n, s in shapes.items()}
    g = {n: read_f32(os.path.join(d, "grads", n + ".bin"), s) for n, s in shapes.items()}
    params = {n: torch.nn.Parameter(t.clone()) for n, t in p.items()}
    decay = [params[n] for n in shapes if not n.endswith("norm")]
    no_decay = [params[n] for n in shapes if n.endswith("norm")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"])
    for step in range(cfg["steps"]):
        for n, t in params.items():
            t.grad = g[n] * (step + 1)  # a different gradient each step
        opt.step()
    os.makedirs(os.path.join(d, "torch_params"), exist_ok=True)
    for n, t in params.items():
        write_f32(os.path.join(d, "torch_params", n + ".bin"), t)


if __name__ == "__main__":
    torch.set_num_threads(1)
    {"model": run_model, "adamw": run_adamw}[sys.argv[1]](sys.argv[2])
