#!/usr/bin/env python3
"""PyTorch reference for `npm run bench -- slice` and `-- scale`: the same tiny Llama-style policy as
turnwise's default (RMSNorm, rotary positions, SwiGLU, untied head) trained with the same PPO-clip
token loss and Adam, on random token batches of the same shape. Prints one JSON line with tokens/s
per wall-second and per CPU-second of the process (`time.process_time`, all threads).

The benches run it with the interpreter bench/torch-python.ts picks: `TORCH_PYTHON` (e.g. a venv with
torch 2.x), else Debian's /usr/bin/python3 (apt-get install -y python3-torch libopenblas0-pthread;
without libopenblas0-pthread Debian's torch falls back to the reference BLAS and is ~15x slower).
Usage: $TORCH_PYTHON bench/torch_reference.py --d-model 64 --layers 2 --heads 4 --ffn 172 --vocab 512 \
         --batch 32 --seq 64 --steps 20 --threads 1
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(x, cos, sin):
    # x: [B, H, T, hd]; rotate pairs (first half, second half) as Llama's rotate_half does.
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Block(torch.nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(d)
        self.norm2 = RMSNorm(d)
        self.q = torch.nn.Linear(d, d, bias=False)
        self.k = torch.nn.Linear(d, d, bias=False)
        self.v = torch.nn.Linear(d, d, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.gate = torch.nn.Linear(d, ffn, bias=False)
        self.up = torch.nn.Linear(d, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, d = x.shape
        hd = d // self.heads
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, hd).transpose(1, 2)
        k = self.k(h).view(b, t, self.heads, hd).transpose(1, 2)
        v = self.v(h).view(b, t, self.heads, hd).transpose(1, 2)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + mask
        y = att.softmax(-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyLlama(torch.nn.Module):
    def __init__(self, vocab, d, layers, heads, ffn, ctx):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList([Block(d, heads, ffn) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        freqs = torch.outer(torch.arange(ctx).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos()[None, None])
        self.register_buffer("sin", emb.sin()[None, None])

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.full((t, t), float("-inf")).triu(1)
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x, self.cos[:, :, :t], self.sin[:, :, :t], mask)
        return self.head(self.norm(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=172)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    model = TinyLlama(a.vocab, a.d_model, a.layers, a.heads, a.ffn, a.seq)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99))
    ids = torch.randint(0, a.vocab, (a.batch, a.seq))
    targets = torch.randint(0, a.vocab, (a.batch, a.seq))
    old = torch.full((a.batch, a.seq), -math.log(a.vocab))
    adv = torch.randn(a.batch, a.seq)
    mask = (torch.rand(a.batch, a.seq) < 0.5).float()

    def step():
        logp = model(ids).log_softmax(-1).gather(-1, targets[..., None])[..., 0]
        ratio = (logp - old).exp()
        loss = torch.max(-adv * ratio, -adv * ratio.clamp(0.8, 1.2))
        loss = (loss * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(3):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        step()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    tokens = a.batch * a.seq * a.steps
    print(json.dumps({"trainTokensPerSec": tokens / dt, "trainTokensPerCpuSec": tokens / cpu, "msPerStep": 1000 * dt / a.steps,
                      "torch": torch.__version__, "threads": a.threads}))


if __name__ == "__main__":
    main()
