"""Independent reference for turnwise's Hugging Face model loader (run with Debian's /usr/bin/python3).

Writes tiny random causal LMs in Hugging Face layout (config.json + safetensors, F32/BF16/F16,
single file or sharded with model.safetensors.index.json) for each architecture variant turnwise
supports, and computes with PyTorch -- written here from transformers' documented semantics, with
no transformers package -- the next-token logits of a few prompts (left-padded batch) and greedy
continuations. turnwise's test loads the same folders and must agree.

    /usr/bin/python3 test/models/hf/torch_reference.py OUT_DIR

prints nothing; writes OUT_DIR/<variant>/ and OUT_DIR/reference.json.
With --logprobs FOLDER IDS.json it prints the prompt's next-token log-probs under the full vocabulary.

    /usr/bin/python3 test/models/hf/torch_reference.py --check MODEL_DIR IDS_JSON

reads a model folder turnwise exported (config.json, safetensors, tokenizer_config.json,
generation_config.json) as a consumer of Hugging Face folders would, and prints as JSON the fields
generation depends on and the logits of the given prompt.
"""
import json
import math
import os
import struct
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)

VARIANTS = {
    # Llama, multi-head attention, untied head, F32, plain RoPE.
    "llama-mha": dict(model_type="llama", hidden=64, layers=2, heads=4, kv=4, ffn=96, vocab=300, tie=False,
                      theta=10000.0, eps=1e-6, dtype="F32"),
    # Llama 3.x style: grouped-query attention, tied embeddings, llama3 RoPE scaling.
    "llama-gqa-tied": dict(model_type="llama", hidden=96, layers=2, heads=6, kv=2, ffn=128, vocab=300, tie=True,
                           theta=500000.0, eps=1e-5, dtype="F32", max_pos=512,
                           rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                         "high_freq_factor": 4.0, "original_max_position_embeddings": 64}),
    # Llama with attention_bias (q/k/v/o biases) and mlp_bias; transformers 5 style rope_parameters.
    "llama-bias": dict(model_type="llama", hidden=64, layers=2, heads=4, kv=2, ffn=96, vocab=300, tie=False,
                       theta=10000.0, eps=1e-6, dtype="F32", attention_bias=True, mlp_bias=True, v5_rope=True),
    # Qwen2/2.5: q/k/v biases (no o bias), GQA, tied, large theta.
    "qwen2": dict(model_type="qwen2", hidden=64, layers=2, heads=4, kv=2, ffn=96, vocab=300, tie=True,
                  theta=1000000.0, eps=1e-6, dtype="F32"),
    # Qwen3: per-head q/k RMSNorm, head_dim 32 with hidden 64 (q width 128), BF16 weights.
    "qwen3-bf16": dict(model_type="qwen3", hidden=64, layers=2, heads=4, kv=2, head_dim=32, ffn=96, vocab=300,
                       tie=False, theta=1000000.0, eps=1e-6, dtype="BF16"),
    # Mistral: GQA (1 kv head), a sliding window larger than the prompts, linear RoPE scaling,
    # F16 weights in two shards with an index.
    "mistral-f16-sharded": dict(model_type="mistral", hidden=64, layers=3, heads=4, kv=1, ffn=96, vocab=300,
                                tie=False, theta=10000.0, eps=1e-5, dtype="F16", sliding_window=4096,
                                rope_scaling={"type": "linear", "factor": 2.0}, shards=2),
}

CLASS = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
         "qwen3": "Qwen3ForCausalLM"}


def head_dim(v):
    return v.get("head_dim", v["hidden"] // v["heads"])


def make_weights(v):
    """Random weights with a wide logit spread (so greedy argmaxes are not near ties), rounded to the dtype."""
    d, f, q, kv, hd = v["hidden"], v["ffn"], v["heads"] * head_dim(v), v["kv"] * head_dim(v), head_dim(v)
    w = {"model.embed_tokens.weight": torch.randn(v["vocab"], d)}
    qkv_bias = v["model_type"] == "qwen2" or v.get("attention_bias", False)
    for i in range(v["layers"]):
        p = f"model.layers.{i}"
        w[f"{p}.input_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        w[f"{p}.post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        w[f"{p}.self_attn.q_proj.weight"] = torch.randn(q, d) / math.sqrt(d)
        w[f"{p}.self_attn.k_proj.weight"] = torch.randn(kv, d) / math.sqrt(d)
        w[f"{p}.self_attn.v_proj.weight"] = torch.randn(kv, d) / math.sqrt(d)
        w[f"{p}.self_attn.o_proj.weight"] = torch.randn(d, q) / math.sqrt(q)
        if qkv_bias:
            w[f"{p}.self_attn.q_proj.bias"] = 0.1 * torch.randn(q)
            w[f"{p}.self_attn.k_proj.bias"] = 0.1 * torch.randn(kv)
            w[f"{p}.self_attn.v_proj.bias"] = 0.1 * torch.randn(kv)
        if v.get("attention_bias", False):
            w[f"{p}.self_attn.o_proj.bias"] = 0.1 * torch.randn(d)
        if v["model_type"] == "qwen3":
            w[f"{p}.self_attn.q_norm.weight"] = 1 + 0.1 * torch.randn(hd)
            w[f"{p}.self_attn.k_norm.weight"] = 1 + 0.1 * torch.randn(hd)
        w[f"{p}.mlp.gate_proj.weight"] = torch.randn(f, d) / math.sqrt(d)
        w[f"{p}.mlp.up_proj.weight"] = torch.randn(f, d) / math.sqrt(d)
        w[f"{p}.mlp.down_proj.weight"] = torch.randn(d, f) / math.sqrt(f)
        if v.get("mlp_bias", False):
            w[f"{p}.mlp.gate_proj.bias"] = 0.1 * torch.randn(f)
            w[f"{p}.mlp.up_proj.bias"] = 0.1 * torch.randn(f)
            w[f"{p}.mlp.down_proj.bias"] = 0.1 * torch.randn(d)
    w["model.norm.weight"] = 1 + 0.1 * torch.randn(d)
    if not v["tie"]:
        w["lm_head.weight"] = torch.randn(v["vocab"], d) / math.sqrt(d) * 4
    cast = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}[v["dtype"]]
    return {k: t.to(cast).to(torch.float32) for k, t in w.items()}, cast


def tensor_bytes(t, cast):
    if cast == torch.bfloat16:
        return t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    return t.to(cast).numpy().tobytes()


def write_safetensors(path, tensors, cast, dtype):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        raw = tensor_bytes(tensors[name], cast)
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for raw in blobs:
            out.write(raw)


def config_json(v):
    c = {"architectures": [CLASS[v["model_type"]]], "model_type": v["model_type"], "hidden_size": v["hidden"],
         "num_hidden_layers": v["layers"], "num_attention_heads": v["heads"], "num_key_value_heads": v["kv"],
         "intermediate_size": v["ffn"], "vocab_size": v["vocab"], "max_position_embeddings": v.get("max_pos", 256),
         "rms_norm_eps": v["eps"], "tie_word_embeddings": v["tie"], "hidden_act": "silu",
         "torch_dtype": {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[v["dtype"]],
         "bos_token_id": 1, "eos_token_id": 2}
    if v.get("v5_rope"):
        c["rope_parameters"] = {"rope_type": "default", "rope_theta": v["theta"]}
    else:
        c["rope_theta"] = v["theta"]
        c["rope_scaling"] = v.get("rope_scaling")
    if "head_dim" in v:
        c["head_dim"] = v["head_dim"]
    if v["model_type"] == "llama":
        c["attention_bias"] = v.get("attention_bias", False)
        c["mlp_bias"] = v.get("mlp_bias", False)
    if v["model_type"] == "mistral":
        c["sliding_window"] = v["sliding_window"]
    if v["model_type"] in ("qwen2", "qwen3"):
        c["use_sliding_window"] = False
        c["sliding_window"] = None
    return c


def write_folder(folder, v, weights, cast):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as out:
        json.dump(config_json(v), out, indent=2)
    shards = v.get("shards", 1)
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), weights, cast, v["dtype"])
        return
    names = sorted(weights)
    weight_map = {}
    for s in range(shards):
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: weights[n] for n in names[s::shards]}
        write_safetensors(os.path.join(folder, file), part, cast, v["dtype"])
        weight_map.update({n: file for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as out:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, out)


def inv_freq(v):
    """transformers' RoPE inverse frequencies, in float32 as it computes them."""
    hd = head_dim(v)
    base = v["theta"]
    inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    s = v.get("rope_scaling")
    if s is None:
        return inv
    kind = s.get("rope_type", s.get("type"))
    if kind == "linear":
        return inv / s["factor"]
    assert kind == "llama3"
    factor, low, high, old = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


def rms_norm(x, w, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(v, w, ids, mask, lora=None):
    """Logits [B, T, V] of a left- or right-padded batch (mask 1 = real token); `lora` adds
    scale * B (A x) to each adapted projection (PEFT's LoRA, no dropout)."""
    b, t = ids.shape
    hd, h, kvh, eps = head_dim(v), v["heads"], v["kv"], v["eps"]
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    freqs = (inv_freq(v)[None, :, None] @ positions[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None], emb.sin()[:, None]  # [B, 1, T, hd]
    allowed = torch.tril(torch.ones(t, t, dtype=torch.bool))[None] & mask[:, None, :].bool()  # [B, T, T]
    bias = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[:, None]  # [B, 1, T, T]
    x = w["model.embed_tokens.weight"][ids]
    def lin(z, name):
        y = z @ w[name + ".weight"].T + (w[name + ".bias"] if name + ".bias" in w else 0)
        if lora is not None and name in lora["A"]:
            y = y + lora["scale"] * ((z @ lora["A"][name].T) @ lora["B"][name].T)
        return y
    for i in range(v["layers"]):
        p = f"model.layers.{i}"
        hs = rms_norm(x, w[f"{p}.input_layernorm.weight"], eps)
        q = lin(hs, f"{p}.self_attn.q_proj").view(b, t, h, hd)
        k = lin(hs, f"{p}.self_attn.k_proj").view(b, t, kvh, hd)
        val = lin(hs, f"{p}.self_attn.v_proj").view(b, t, kvh, hd).transpose(1, 2)
        if v["model_type"] == "qwen3":
            q = rms_norm(q, w[f"{p}.self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[f"{p}.self_attn.k_norm.weight"], eps)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.repeat_interleave(k, h // kvh, dim=1)
        val = torch.repeat_interleave(val, h // kvh, dim=1)
        scores = q @ k.transpose(2, 3) / math.sqrt(hd) + bias
        ctx = (torch.softmax(scores, dim=-1) @ val).transpose(1, 2).reshape(b, t, h * hd)
        x = x + lin(ctx, f"{p}.self_attn.o_proj")
        hs = rms_norm(x, w[f"{p}.post_attention_layernorm.weight"], eps)
        gate = lin(hs, f"{p}.mlp.gate_proj")
        x = x + lin(torch.nn.functional.silu(gate) * lin(hs, f"{p}.mlp.up_proj"), f"{p}.mlp.down_proj")
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if v["tie"] else w["lm_head.weight"]
    return x @ head.T


def greedy(v, w, prompt, steps):
    ids = list(prompt)
    for _ in range(steps):
        x = torch.tensor([ids])
        logits = forward(v, w, x, torch.ones_like(x))
        ids.append(int(logits[0, -1].argmax()))
    return ids[len(prompt):]


LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def lora_reference(out_dir, reference):
    """A LoRA adapter (all seven target modules, r 4, alpha 8) on the qwen2 variant, saved as PEFT
    files, with the logits of the adapted model and the gradients of a log-likelihood w.r.t. A and B."""
    v = VARIANTS["qwen2"]
    base, _ = make_weights(v)  # same seed stream position is not needed: the base is re-read by turnwise
    folder = os.path.join(out_dir, "qwen2-lora")
    write_folder(os.path.join(folder, "base"), v, base, torch.float32)
    rank, alpha = 4, 8.0
    modules = [f"model.layers.{i}.{'self_attn' if t.endswith(('q_proj', 'k_proj', 'v_proj', 'o_proj')) else 'mlp'}.{t}"
               for i in range(v["layers"]) for t in LORA_TARGETS]
    a = {m: (0.3 * torch.randn(rank, base[m + ".weight"].shape[1])).requires_grad_() for m in modules}
    b = {m: (0.3 * torch.randn(base[m + ".weight"].shape[0], rank)).requires_grad_() for m in modules}
    lora = {"A": a, "B": b, "scale": alpha / rank}
    peft = {}
    for m in modules:
        peft[f"base_model.model.{m}.lora_A.weight"] = a[m].detach()
        peft[f"base_model.model.{m}.lora_B.weight"] = b[m].detach()
    write_safetensors(os.path.join(folder, "adapter_model.safetensors"), peft, torch.float32, "F32")
    with open(os.path.join(folder, "adapter_config.json"), "w") as out:
        json.dump({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": rank, "lora_alpha": alpha, "lora_dropout": 0.0,
                   "target_modules": LORA_TARGETS, "bias": "none", "fan_in_fan_out": False,
                   "base_model_name_or_path": "base"}, out)
    prompt = [5, 17, 42, 99, 3, 250, 7, 8]
    ids = torch.tensor([prompt])
    logits = forward(v, base, ids, torch.ones_like(ids), lora)
    logp = torch.log_softmax(logits[0, :-1], dim=-1)
    total = logp[torch.arange(len(prompt) - 1), torch.tensor(prompt[1:])].sum()
    total.backward()
    grads = {}
    for m in modules:
        grads[f"base_model.model.{m}.lora_A.weight"] = a[m].grad.reshape(-1).tolist()
        grads[f"base_model.model.{m}.lora_B.weight"] = b[m].grad.reshape(-1).tolist()
    reference["qwen2-lora"] = {"prompt": prompt, "logits": logits.detach().reshape(-1).tolist(),
                               "logLikelihood": float(total), "grads": grads, "vocab": v["vocab"]}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    reference = {}
    gen = torch.Generator().manual_seed(7)
    for name, v in VARIANTS.items():
        weights, cast = make_weights(v)
        write_folder(os.path.join(out_dir, name), v, weights, cast)
        lengths = [11, 7, 3]
        prompts = [torch.randint(0, v["vocab"], (n,), generator=gen).tolist() for n in lengths]
        t = max(lengths)
        ids = torch.zeros(len(prompts), t, dtype=torch.int64)
        mask = torch.zeros(len(prompts), t, dtype=torch.int64)
        for r, p in enumerate(prompts):  # left padding, as generation batches are
            ids[r, t - len(p):] = torch.tensor(p)
            mask[r, t - len(p):] = 1
        with torch.no_grad():
            logits = forward(v, weights, ids, mask)
            continuations = [greedy(v, weights, p, 12) for p in prompts]
        reference[name] = {"prompts": prompts, "seqLen": t, "vocab": v["vocab"],
                           "logits": logits.reshape(-1).tolist(), "greedy": continuations}
    lora_reference(out_dir, reference)
    with open(os.path.join(out_dir, "reference.json"), "w") as out:
        json.dump(reference, out)


DTYPES = {"F32": (torch.float32, 4), "F16": (torch.float16, 2), "BF16": (torch.bfloat16, 2)}


def read_safetensors(path):
    """A safetensors file as float32 tensors (header: u64 length, JSON; then the data)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, size = DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        if dtype == torch.bfloat16:
            t = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype)
        out[name] = t.reshape(entry["shape"]).to(torch.float32)
    return out


def variant_from_config(c):
    """The reference's model description from a config.json (the fields transformers reads)."""
    rope = c.get("rope_parameters") or {}
    return dict(model_type=c["model_type"], hidden=c["hidden_size"], layers=c["num_hidden_layers"],
                heads=c["num_attention_heads"], kv=c.get("num_key_value_heads", c["num_attention_heads"]),
                head_dim=c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"], ffn=c["intermediate_size"],
                vocab=c["vocab_size"], tie=c.get("tie_word_embeddings", False), theta=rope.get("rope_theta", c.get("rope_theta", 10000.0)),
                eps=c.get("rms_norm_eps", 1e-6), rope_scaling=c.get("rope_scaling"), attention_bias=c.get("attention_bias", False),
                mlp_bias=c.get("mlp_bias", False))


def check(folder, ids_path):
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    weights = {}
    for name in sorted(os.listdir(folder)):
        # The model's weights only (a checkpoint also holds optimizer.safetensors), as from_pretrained reads them.
        if name.startswith("model") and name.endswith(".safetensors"):
            weights.update(read_safetensors(os.path.join(folder, name)))
    v = variant_from_config(config)
    with open(ids_path) as f:
        prompt = json.load(f)
    with torch.no_grad():
        ids = torch.tensor([prompt])
        logits = forward(v, weights, ids, torch.ones_like(ids))
    read = lambda name: json.load(open(os.path.join(folder, name))) if os.path.exists(os.path.join(folder, name)) else None
    tok_config = read("tokenizer_config.json") or {}
    out = {
        "config": {k: config.get(k) for k in ("architectures", "model_type", "bos_token_id", "eos_token_id", "pad_token_id", "vocab_size", "tie_word_embeddings", "num_key_value_heads", "torch_dtype")},
        "generation_config": read("generation_config.json"),
        "tokenizer_config": {k: tok_config.get(k) for k in ("bos_token", "eos_token", "pad_token", "tokenizer_class", "model_max_length")},
        "has_chat_template": isinstance(tok_config.get("chat_template"), (str, list)) or os.path.exists(os.path.join(folder, "chat_template.jinja")),
        "tensors": sorted(weights),
        "logits": logits[0].reshape(-1).tolist(),
    }
    print(json.dumps(out))


def prompt_logprobs(folder, ids_path):
    """log p(ids[t+1] | ids[..t]) under a log-softmax over every row of the LM head, as
    transformers' (and lm-evaluation-harness's) scoring computes it."""
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    weights = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("model") and name.endswith(".safetensors"):
            weights.update(read_safetensors(os.path.join(folder, name)))
    v = variant_from_config(config)
    with open(ids_path) as f:
        prompt = json.load(f)
    with torch.no_grad():
        ids = torch.tensor([prompt])
        logits = forward(v, weights, ids, torch.ones_like(ids))[0].to(torch.float64)
        logp = torch.log_softmax(logits, dim=-1)
        picked = logp[torch.arange(len(prompt) - 1), torch.tensor(prompt[1:])]
    print(json.dumps({"vocab": logits.shape[-1], "logprobs": picked.tolist()}))


if __name__ == "__main__":
    if sys.argv[1] == "--logprobs":
        prompt_logprobs(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1])
