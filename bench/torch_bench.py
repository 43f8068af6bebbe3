#!/usr/bin/python3
"""The same GPT in PyTorch eager (docs/model.md), for a side-by-side speed comparison.

Prints, per scheme, training tokens/s of the canonical config (d=128, 4 layers, 4 heads,
T=256, batch 16, AdamW) and one evaluation window at 4096 (time, tokens/s), as
`torch <pe> train <tokens/s>` and `torch <pe> eval4096 <tokens/s>` lines that
scripts/bench.sh and scripts/gpu_check.sh parse.
Training: the median of `steps` timed steps after 2 untimed ones (3 on cuda); evaluation: the
median of 3 windows after one untimed one. The threads are set with torch.set_num_threads;
scripts/bench.sh runs this with PyTorch's own defaults otherwise (no OMP_/OPENBLAS_ variable
of ours in its environment).
BENCH_CLOCK=cpu times with the process's CPU time instead of wall time, as bench/bench_util.h
does (development on a shared machine; scripts/bench.sh never sets it). BENCH_EVAL=0 skips
the evaluation window (scripts/bench.sh passes it on when it is told to skip evaluation).
Usage: torch_bench.py [threads] [steps] [cpu|cuda] [batch] [explicit|sdpa|compile] [schemes]
schemes: comma-separated, timed in that order (default: none,learned,sinusoidal,rope,alibi,t5;
scripts/bench.sh starts each round at another scheme, as it does for ours).
On cuda each timed step ends with torch.cuda.synchronize(). `sdpa` replaces the written-out
attention (scores, mask, softmax, P v) with F.scaled_dot_product_attention, PyTorch's fused
kernels; the default is the same explicit attention as on the CPU. `compile` is `sdpa` with
the model under torch.compile (default mode; PyTorch 2.0 or later): its warm-up steps include
the compilation, and the evaluation window compiles once more for its length. A PyTorch without
torch.compile prints `torch_bench.py: no torch.compile` and exits with 3.
"""
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
dev = torch.device(sys.argv[3] if len(sys.argv) > 3 else "cpu")
B = int(sys.argv[4]) if len(sys.argv) > 4 else 16
attn = sys.argv[5] if len(sys.argv) > 5 else "explicit"
if attn not in ("explicit", "sdpa", "compile"):
    sys.exit(f"torch_bench.py: attention '{attn}'; valid: explicit, sdpa, compile")
if attn == "compile" and not hasattr(torch, "compile"):
    print("torch_bench.py: no torch.compile in PyTorch " + torch.__version__, file=sys.stderr)
    sys.exit(3)
SCHEMES = ["none", "learned", "sinusoidal", "rope", "alibi", "t5"]
order = sys.argv[6].split(",") if len(sys.argv) > 6 else SCHEMES
for pe in order:
    if pe not in SCHEMES:
        sys.exit(f"torch_bench.py: scheme '{pe}'; valid: {', '.join(SCHEMES)}")
torch.set_num_threads(threads)
clock = time.process_time if os.environ.get("BENCH_CLOCK") == "cpu" else time.perf_counter
V, C, L, H, T = 105, 128, 4, 4, 256
D = C // H


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


def alibi_slopes(n):
    return torch.tensor([2 ** (-8 * (h + 1) / n) for h in range(n)])


def t5_buckets(n, nb=32, max_distance=128):
    # causal T5 buckets of offsets n = i - j >= 0 (Raffel et al. 2020): exact below nb/2,
    # log-spaced up to max_distance, the last bucket beyond
    exact = nb // 2
    n = n.clamp(min=0)
    log = exact + (torch.log(n.float().clamp(min=1) / exact) / math.log(max_distance / exact)
                   * (nb - exact)).long()
    return torch.where(n < exact, n, log.clamp(max=nb - 1))


class Model(torch.nn.Module):
    def __init__(self, pe, max_len=4096):
        super().__init__()
        self.pe = pe
        self.wte = torch.nn.Embedding(V, C)
        self.wpe = torch.nn.Embedding(max_len, C) if pe == "learned" else None
        self.rel_bias = torch.nn.Embedding(32, H) if pe == "t5" else None
        self.blocks = torch.nn.ModuleList()
        for _ in range(L):
            self.blocks.append(torch.nn.ModuleDict(dict(
                ln_1=torch.nn.LayerNorm(C), c_attn=torch.nn.Linear(C, 3 * C), c_proj=torch.nn.Linear(C, C),
                ln_2=torch.nn.LayerNorm(C), c_fc=torch.nn.Linear(C, 4 * C), mlp_proj=torch.nn.Linear(4 * C, C))))
        self.ln_f = torch.nn.LayerNorm(C)

    def forward(self, idx):
        b, t = idx.shape
        x = self.wte(idx)
        pos = torch.arange(t, device=idx.device)
        if self.pe == "learned":
            x = x + self.wpe(pos)
        if self.pe == "sinusoidal":
            i = torch.arange(0, C, 2, device=idx.device)
            a = pos[:, None] / (10000 ** (i / C))
            pe = torch.zeros(t, C, device=idx.device)
            pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
            x = x + pe
        if self.pe == "rope":
            f = 10000 ** (-torch.arange(0, D, 2, device=idx.device) / D)
            ang = pos[:, None] * f
            cos, sin = torch.cos(ang)[None, None], torch.sin(ang)[None, None]
        mask = torch.ones(t, t, dtype=torch.bool, device=idx.device).tril()
        bias = None
        if self.pe == "alibi":
            dist = (pos[:, None] - pos[None, :]).clamp(min=0).float()
            bias = -alibi_slopes(H).to(idx.device)[:, None, None] * dist
        if self.pe == "t5":
            bias = self.rel_bias(t5_buckets(pos[:, None] - pos[None, :])).permute(2, 0, 1)
        for blk in self.blocks:
            h = blk["ln_1"](x)
            q, k, v = blk["c_attn"](h).split(C, dim=2)
            q, k, v = (z.view(b, t, H, D).transpose(1, 2) for z in (q, k, v))
            if self.pe == "rope":
                def rot(z):
                    z0, z1 = z[..., 0::2], z[..., 1::2]
                    return torch.stack((z0 * cos - z1 * sin, z0 * sin + z1 * cos), -1).flatten(-2)
                q, k = rot(q), rot(k)
            if attn != "explicit" and bias is None:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            elif attn != "explicit":
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.masked_fill(~mask, float("-inf")))
            else:
                s = q @ k.transpose(-1, -2) / math.sqrt(D)
                if bias is not None:
                    s = s + bias
                s = s.masked_fill(~mask, float("-inf"))
                y = F.softmax(s, dim=-1) @ v
            y = y.transpose(1, 2).reshape(b, t, C)
            x = x + blk["c_proj"](y)
            x = x + blk["mlp_proj"](F.gelu(blk["c_fc"](blk["ln_2"](x)), approximate="tanh"))
        return self.ln_f(x) @ self.wte.weight.t()


warmup = 2 if dev.type == "cpu" else 3  # the GPU's first steps also set up cuBLAS and caches
for pe in order:
    torch.manual_seed(1)
    m = Model(pe).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    if attn == "compile":
        m = torch.compile(m)
    x = torch.randint(0, V, (B, T), device=dev)
    y = torch.randint(0, V, (B, T), device=dev)
    times = []
    for i in range(steps + warmup):
        sync()
        t0 = clock()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(x).view(-1, V), y.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        sync()
        if i >= warmup:
            times.append(clock() - t0)
    times.sort()
    print(f"torch {pe} train {B * T / times[len(times) // 2]:.0f}", flush=True)
    if os.environ.get("BENCH_EVAL") == "0":
        continue
    with torch.no_grad():
        xe = torch.randint(0, V, (1, 4096), device=dev)
        m(xe)  # untimed: first-use allocations
        evals = []
        for _ in range(3):
            sync()
            t0 = clock()
            m(xe)
            sync()
            evals.append(clock() - t0)
        evals.sort()
    print(f"torch {pe} eval4096 {4096 / evals[1]:.0f}", flush=True)
