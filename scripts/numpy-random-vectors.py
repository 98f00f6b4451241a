"""Writes test vectors for turnwise's NumPy random port (src/core/numpy/).

Run with Debian's NumPy (the version AgentGym's BabyAI server ran, 1.24.2):
    /usr/bin/python3 scripts/numpy-random-vectors.py > test/core/fixtures/numpy-random-vectors.json

Every stream is Generator(PCG64(SeedSequence(seed))), which is what Gymnasium's
`np_random(seed)` builds and what Minigrid's `_rand_int` / `_rand_float` draw from.
"""
import json

import numpy as np

SEEDS = [0, 1, 2, 7, 19, 42, 999, 12345, 2**31 - 1, 2**32 - 1, 2**32 + 5, 2**64 + 7]

# (low, high) pairs for integers(low, high), covering NumPy's code paths: a range of one value
# (no draw), the 32-bit Lemire path, exactly 2^32 values (raw 32-bit draw), and the 64-bit Lemire path.
RANGES = [
    (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7), (1, 8), (5, 17), (-10, 10), (0, 1000),
    (0, 2**31), (0, 2**32 - 1), (0, 2**32), (0, 2**32 + 1), (-(2**40), 2**40), (0, 2**62 + 3), (0, 2**63 - 1),
]


def as_int(x):
    return int(x)


def stream(seed):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


out = {"numpy": np.__version__, "seeds": []}
for seed in SEEDS:
    ss = np.random.SeedSequence(seed)
    entry = {
        "seed": str(seed),
        "pool": [int(w) for w in ss.pool],
        "state32": [int(w) for w in ss.generate_state(8, np.uint32)],
        "pcg": {k: str(v) for k, v in np.random.PCG64(ss).state["state"].items()},
    }
    g = stream(seed)
    entry["raw"] = [str(int(v)) for v in g.bit_generator.random_raw(6)]
    g = stream(seed)
    entry["random"] = [float(g.random()) for _ in range(6)]
    # One call per range, in order, on one stream (mixes the 32-bit buffer with 64-bit draws).
    g = stream(seed)
    entry["integers"] = [[str(lo), str(hi), str(as_int(g.integers(lo, hi)))] for lo, hi in RANGES * 3]
    # Interleaved calls as Minigrid makes them: small integers, coins, uniform floats.
    g = stream(seed)
    mixed = []
    for k in range(60):
        kind = k % 5
        if kind == 0:
            mixed.append(["integers", 0, 6, as_int(g.integers(0, 6))])
        elif kind == 1:
            mixed.append(["uniform", 0, 1, float(g.uniform(0, 1))])
        elif kind == 2:
            mixed.append(["integers", 0, 2, as_int(g.integers(0, 2))])
        elif kind == 3:
            mixed.append(["uniform", -2.5, 3.25, float(g.uniform(-2.5, 3.25))])
        else:
            mixed.append(["integers", 1, 7, as_int(g.integers(1, 7))])
    entry["mixed"] = mixed
    out["seeds"].append(entry)

print(json.dumps(out, indent=1))
