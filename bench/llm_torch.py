"""PyTorch side of `npm run bench -- llm`: the same SmolLM2-135M-shaped model (random weights) and the
same work as bench/llm.bench.ts -- prefill, batched decode with a KV cache, a training step (full and
LoRA) -- on 1 thread. Prints one JSON object: each figure per wall-second and per CPU-second of the
process (`time.process_time`, which a shared machine's other load does not inflate). Run with the
interpreter bench/torch-python.ts picks (`TORCH_PYTHON`, else Debian's /usr/bin/python3).

    $TORCH_PYTHON bench/llm_torch.py '{"vocab": 49152, ...}'

Prefill and decode compute the logits of each row's last token only, as a sampler needs (and as
turnwise's `extendPacked` does); training computes them at every position on both sides.
"""
import json
import math
import resource
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)


class Rms(torch.nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Lora(torch.nn.Module):
    """A linear layer with an optional LoRA pair (PEFT's form, no dropout)."""

    def __init__(self, inp, out, rank, bias=False):
        super().__init__()
        self.base = torch.nn.Linear(inp, out, bias=bias)
        self.rank = rank
        if rank:
            self.a = torch.nn.Parameter(torch.randn(rank, inp) / math.sqrt(inp))
            self.b = torch.nn.Parameter(torch.zeros(out, rank))

    def forward(self, x):
        y = self.base(x)
        if self.rank:
            y = y + 2.0 * ((x @ self.a.t()) @ self.b.t())
        return y


class Block(torch.nn.Module):
    def __init__(self, c, rank):
        super().__init__()
        d, hd = c["d"], c["headDim"]
        self.h, self.kv, self.hd = c["heads"], c["kvHeads"], hd
        self.n1, self.n2 = Rms(d, c["eps"]), Rms(d, c["eps"])
        bias = c.get("qkvBias", False)  # Qwen2
        self.q = Lora(d, self.h * hd, rank, bias)
        self.k = Lora(d, self.kv * hd, rank, bias)
        self.v = Lora(d, self.kv * hd, rank, bias)
        self.o = Lora(self.h * hd, d, rank)
        self.gate = Lora(d, c["ffn"], rank)
        self.up = Lora(d, c["ffn"], rank)
        self.down = Lora(c["ffn"], d, rank)

    def forward(self, x, cos, sin, cache=None):
        b, t, _ = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        q = q * cos + rot(q) * sin
        k = k * cos + rot(k) * sin
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        g = self.h // self.kv
        qg = q.reshape(b, self.kv, g * t, self.hd)
        scores = (qg @ k.transpose(2, 3)).view(b, self.h, t, -1) / math.sqrt(self.hd)
        tk = k.shape[2]
        if t > 1:
            mask = torch.full((t, tk), float("-inf")).triu(tk - t + 1)
            scores = scores + mask
        ctx = (torch.softmax(scores, -1).view(b, self.kv, g * t, tk) @ v).view(b, self.h, t, self.hd)
        x = x + self.o(ctx.transpose(1, 2).reshape(b, t, self.h * self.hd))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def rot(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), -1)


class Model(torch.nn.Module):
    def __init__(self, c, rank=0):
        super().__init__()
        self.c = c
        self.emb = torch.nn.Embedding(c["vocab"], c["d"])
        self.blocks = torch.nn.ModuleList([Block(c, rank) for _ in range(c["layers"])])
        self.norm = Rms(c["d"], c["eps"])
        hd = c["headDim"]
        self.inv = 1.0 / (c["theta"] ** (torch.arange(0, hd, 2).float() / hd))

    def rope(self, positions):
        f = positions[:, None].float() * self.inv[None]
        e = torch.cat([f, f], -1)
        return e.cos()[None, None], e.sin()[None, None]

    def forward(self, ids, start=0, caches=None, last_only=False):
        cos, sin = self.rope(torch.arange(start, start + ids.shape[1]))
        x = self.emb(ids)
        for i, blk in enumerate(self.blocks):
            x = blk(x, cos, sin, None if caches is None else caches[i])
        if last_only:
            x = x[:, -1:]
        return self.norm(x) @ self.emb.weight.t()  # tied head


def timed(fn, repeat):
    """Best wall and best CPU seconds of one call over `repeat` calls, after a warm-up call."""
    fn()
    wall, cpu = math.inf, math.inf
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu


def main(spec):
    c = spec["model"]
    out = {"torch": torch.__version__, "threads": torch.get_num_threads()}
    # "skipInference": training only (the Qwen2.5-0.5B figure of `npm run bench -- llm`).
    model = None if spec.get("skipInference") else Model(c).eval()
    with torch.no_grad():
        if model is not None:
            prompt = torch.randint(0, c["vocab"], (1, spec["prefillTokens"]))
            wall, cpu = timed(lambda: model(prompt, last_only=True), spec["repeat"])
            out["prefillTokPerSec"] = spec["prefillTokens"] / wall
            out["prefillTokPerCpuSec"] = spec["prefillTokens"] / cpu
            out["decode"], out["decodeCpu"] = {}, {}
            for rows in spec["decodeRows"]:
                ctx = torch.randint(0, c["vocab"], (rows, spec["decodeContext"]))

                def run():
                    caches = [{} for _ in range(c["layers"])]
                    logits = model(ctx, 0, caches, last_only=True)
                    tok = logits[:, -1].argmax(-1, keepdim=True)
                    start, cpu = time.perf_counter(), time.process_time()
                    for s in range(spec["decodeSteps"]):
                        logits = model(tok, spec["decodeContext"] + s, caches, last_only=True)
                        tok = logits[:, -1].argmax(-1, keepdim=True)
                    return time.perf_counter() - start, time.process_time() - cpu

                run()
                runs = [run() for _ in range(spec["repeat"])]
                out["decode"][str(rows)] = rows * spec["decodeSteps"] / min(w for w, _ in runs)
                out["decodeCpu"][str(rows)] = rows * spec["decodeSteps"] / min(c for _, c in runs)
    b, t = spec["trainBatch"]
    ids = torch.randint(0, c["vocab"], (b, t + 1))
    # "skipTraining": decode and prefill only (the decode part of `npm run bench -- scale`).
    kinds = spec.get("trainKinds", ["full", "lora"])
    for kind, rank in () if spec.get("skipTraining") else [(k, 0 if k == "full" else spec["loraRank"]) for k in kinds]:
        m = Model(c, rank)
        if rank:
            for name, p in m.named_parameters():
                p.requires_grad = name.endswith(".a") or name.endswith(".b")
        params = [p for p in m.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=1e-5)
        old = torch.randn(b, t) * 0.1 - 8
        adv = torch.randn(b, t)

        def step():
            logits = m(ids[:, :-1])
            logp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None])[..., 0]
            ratio = torch.exp(logp - old)
            loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()

        wall, cpu = timed(step, spec["trainRepeat"])
        out[f"train_{kind}_TokPerSec"] = b * t / wall
        out[f"train_{kind}_TokPerCpuSec"] = b * t / cpu
        del m, opt
    out["maxRssMiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
