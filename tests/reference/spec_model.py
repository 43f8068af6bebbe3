#!/usr/bin/python3
"""Independent reference of poslab's model and evaluation, written from docs/model.md, docs/formats.md and docs/evaluation.md alone.

docs/model.md (the GPT-2 style decoder, both embedding conventions, the positional encodings and
the RoPE scalings), docs/formats.md (the safetensors checkpoint) and docs/evaluation.md (the
evaluation protocol),
all in float64 with PyTorch. It reads nothing of poslab's C++; its only inputs are a
checkpoint and a prepared data folder.

Usage (always with Debian's /usr/bin/python3, which has python3-torch):
  spec_model.py eval --ckpt FILE --data DIR --len L [--split val] [--windows N]
                     [--buckets N] [--rope-scaling linear|ntk|dynamic|yarn] [--factor s]
      prints one JSON object: loss, ppl, tokens, len, windows, buckets
  spec_model.py compare MANIFEST [--tol 1e-4] [--sensitivity]
      MANIFEST: one line per comparison, tab-separated:
          label  ours.json  ckpt  data  L  windows  scaling|none  factor|-
      computes the reference for each line, compares with poslab's JSON and prints
      one line per comparison; exit status 1 if any relative difference exceeds tol.
"""

import argparse
import json
import math
import struct
import sys

import torch

DT = torch.float64


# --------------------------------------------------------------------------- docs/formats.md
def load_safetensors(path):
    """8-byte LE header length, JSON header, raw little-endian F32 data."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    base = 8 + n
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {info['dtype']}, not F32")
        lo, hi = info["data_offsets"]
        shape = info["shape"]
        count = 1
        for s in shape:
            count *= s
        if hi - lo != 4 * count:
            raise ValueError(f"{path}: tensor {name}: {hi - lo} bytes for shape {shape}")
        raw = bytearray(blob[base + lo:base + hi])  # writable copy for frombuffer
        t = torch.frombuffer(raw, dtype=torch.float32) if count else torch.zeros(0)
        # torch.frombuffer uses native order; x86/arm64 are little-endian
        assert sys.byteorder == "little"
        tensors[name] = t.reshape(shape).to(DT)
    return tensors, meta


def write_safetensors(path, tensors, meta):
    """The same layout, written independently (header padded to 8 bytes)."""
    header, chunks, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].to(torch.float32).contiguous()
        data = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [off, off + len(data)]}
        chunks.append(data)
        off += len(data)
    header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


def synth_checkpoint(path, pe, n_layer, n_head, n_embd, vocab_size, T0, max_len=None,
                     theta=10000.0, causal=True, seed=0, std=0.3, attn_std=None,
                     rope_layout=None, rope_fraction=None, t5_buckets=32, t5_max_distance=128,
                     embedding=None):
    """A random checkpoint with large weights: sharp attention, so the loss depends
    strongly on positions (a barely trained model hardly uses them)."""
    g = torch.Generator().manual_seed(seed)
    d = n_embd

    def rnd(*shape, sd=std):
        return torch.randn(*shape, generator=g, dtype=DT) * sd

    # scaled: wte drawn as its init (std d^-0.5), so the input sqrt(d) wte[ids] has per-dim std
    # 1 and a position table still counts (0.5 * sqrt(d) would drown it)
    emb_sd = 1 / math.sqrt(d) if embedding == "scaled" else 0.5
    w = {"transformer.wte.weight": rnd(vocab_size, d, sd=emb_sd)}
    if pe == "learned":
        w["transformer.wpe.weight"] = rnd(max_len, d, sd=0.5)
    for i in range(n_layer):
        p = f"transformer.h.{i}."
        for ln in ("ln_1", "ln_2"):
            w[p + ln + ".weight"] = 1.0 + rnd(d, sd=0.1)
            w[p + ln + ".bias"] = rnd(d, sd=0.1)
        w[p + "attn.c_attn.weight"] = rnd(3 * d, d, sd=std if attn_std is None else attn_std)
        w[p + "attn.c_attn.bias"] = rnd(3 * d, sd=0.1)
        w[p + "attn.c_proj.weight"] = rnd(d, d, sd=0.1)
        w[p + "attn.c_proj.bias"] = rnd(d, sd=0.05)
        w[p + "mlp.c_fc.weight"] = rnd(4 * d, d, sd=0.1)
        w[p + "mlp.c_fc.bias"] = rnd(4 * d, sd=0.05)
        w[p + "mlp.c_proj.weight"] = rnd(d, 4 * d, sd=0.05)
        w[p + "mlp.c_proj.bias"] = rnd(d, sd=0.05)
    w["transformer.ln_f.weight"] = 1.0 + rnd(d, sd=0.1)
    w["transformer.ln_f.bias"] = rnd(d, sd=0.1)
    if pe == "t5":  # large, so that the bias shapes attention
        w["transformer.rel_bias.weight"] = rnd(t5_buckets, n_head, sd=1.5)
    meta = {"pe": pe, "n_layer": str(n_layer), "n_head": str(n_head), "n_embd": str(d),
            "vocab_size": str(vocab_size), "block_size": str(T0),
            "rope_theta": repr(float(theta)) if theta != int(theta) else str(int(theta)),
            "causal": "true" if causal else "false", "step": "0"}
    if pe == "learned":
        meta["max_len"] = str(max_len)
    if rope_layout is not None:
        meta["rope_layout"] = rope_layout
    if rope_fraction is not None:
        meta["rope_fraction"] = repr(float(rope_fraction))
    if pe == "t5":
        meta["t5_buckets"] = str(t5_buckets)
        meta["t5_max_distance"] = str(t5_max_distance)
    if embedding is not None:  # absent: an older file, read as gpt2
        meta["embedding"] = embedding
    write_safetensors(path, w, meta)


# --------------------------------------------------------------------------- docs/formats.md
def read_bin(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) % 2:
        raise ValueError(f"{path}: size {len(raw)} is not a whole number of uint16")
    ids = struct.unpack(f"<{len(raw) // 2}H", raw)
    return torch.tensor(ids, dtype=torch.long)


def read_vocab(path):
    with open(path, "r", encoding="utf-8") as f:
        v = json.load(f)
    if not isinstance(v, list):
        raise ValueError(f"{path}: not a JSON array")
    return v


# --------------------------------------------------------------------------- docs/model.md
class Config:
    def __init__(self, meta):
        self.pe = meta["pe"]
        self.n_layer = int(meta["n_layer"])
        self.n_head = int(meta["n_head"])
        self.n_embd = int(meta["n_embd"])
        self.vocab_size = int(meta["vocab_size"])
        self.block_size = int(meta["block_size"])  # T0
        self.max_len = int(meta["max_len"]) if "max_len" in meta else None
        self.rope_theta = float(meta.get("rope_theta", "10000"))
        self.causal = meta.get("causal", "true") == "true"
        self.embedding = meta.get("embedding", "gpt2")
        if self.embedding not in ("gpt2", "scaled"):
            raise ValueError(f"embedding {self.embedding!r} is not gpt2|scaled")
        self.hd = self.n_embd // self.n_head
        # rope options; absent: interleaved pairs over all hd dims
        self.rope_layout = meta.get("rope_layout", "interleaved")
        if self.rope_layout not in ("interleaved", "half"):
            raise ValueError(f"unknown rope_layout {self.rope_layout}")
        f = float(meta.get("rope_fraction", "1"))
        if not 0 < f <= 1:
            raise ValueError(f"rope_fraction {f} outside (0, 1]")
        self.rope_r = 2 * math.floor(f * self.hd / 2)  # rotated dims per head
        self.t5_buckets = int(meta.get("t5_buckets", "32"))
        self.t5_max_distance = int(meta.get("t5_max_distance", "128"))


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased
    return (x - mean) / torch.sqrt(var + 1e-5) * w + b


def linear(x, w, b):
    return x @ w.t() + b  # weight [out, in]


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


# --------------------------------------------------------------------------- docs/model.md
def sinusoidal_table(T, d):
    """PE[p,2i] = sin(p / 10000^(2i/d)), PE[p,2i+1] = cos(p / 10000^(2i/d))."""
    pe = torch.zeros(T, d, dtype=DT)
    p = torch.arange(T, dtype=DT)[:, None]
    i = torch.arange(d // 2, dtype=DT)[None, :]
    a = p / torch.pow(torch.tensor(10000.0, dtype=DT), 2 * i / d)
    pe[:, 0::2] = torch.sin(a)
    pe[:, 1::2] = torch.cos(a)
    return pe


def alibi_slopes(H):
    """2^(-8(h+1)/H) for H a power of two; otherwise the ALiBi paper's rule."""
    def pow2(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    if H & (H - 1) == 0:
        return pow2(H)
    n = 1 << (H.bit_length() - 1)  # closest lower power of two
    return pow2(n) + pow2(2 * n)[0::2][:H - n]


def rope_freqs(theta, hd):
    """freq_i = theta^(-2i/hd), i = 0..hd/2-1."""
    i = torch.arange(hd // 2, dtype=DT)
    return torch.pow(torch.tensor(theta, dtype=DT), -2.0 * i / hd)


def rotate(x, angles, mscale=1.0, layout="interleaved"):
    """RoPE on the first r = 2 * angles.shape[-1] dims of x (..., T, hd); the rest pass
    through. Pair i is (2i, 2i+1) interleaved, (i, i + r/2) half. angles (T, r/2)."""
    r = 2 * angles.shape[-1]
    c = torch.cos(angles) * mscale
    s = torch.sin(angles) * mscale
    xr, rest = x[..., :r], x[..., r:]
    if layout == "interleaved":
        a, b = xr[..., 0::2], xr[..., 1::2]
    else:
        a, b = xr[..., :r // 2], xr[..., r // 2:]
    ra, rb = a * c - b * s, a * s + b * c
    out = torch.empty_like(xr)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., :r // 2], out[..., r // 2:] = ra, rb
    return torch.cat([out, rest], dim=-1)


def t5_bucket(n, causal, num_buckets, max_distance):
    """T5's bucket of n = i - j (query i, key j): mesh-tensorflow's _relative_position_bucket."""
    nb, ret = num_buckets, 0
    if causal:
        n = max(n, 0)
    else:
        nb = num_buckets // 2
        if n < 0:  # j > i
            ret += nb
        n = abs(n)
    max_exact = nb // 2
    if n < max_exact:
        return ret + n
    x = math.log(n / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact)
    return ret + min(nb - 1, max_exact + math.floor(x))


class RopePlan:
    """Frequencies, position divisor and mscale for one (scaling, s) choice."""

    def __init__(self, cfg, scaling, s):
        hd, theta, T0 = cfg.rope_r, cfg.rope_theta, cfg.block_size  # r plays hd
        self.pos_div = 1.0
        self.mscale = 1.0
        if scaling in (None, "none"):
            self.freq = rope_freqs(theta, hd)
        elif scaling == "linear":
            self.freq = rope_freqs(theta, hd)
            self.pos_div = s
        elif scaling == "ntk":
            self.freq = rope_freqs(theta * s ** (hd / (hd - 2)), hd)
        elif scaling == "yarn":
            # as deployed (the YaRN authors' code, HF, vLLM): the pair index at which a pair
            # turns n times over T0 is d(n) = hd ln(T0 / (2 pi n)) / (2 ln theta); the share of
            # the original frequency kept falls linearly in the pair index from floor(d(32))
            # to ceil(d(1))
            f = rope_freqs(theta, hd)

            def turning(n):
                return hd * math.log(T0 / (2 * math.pi * n)) / (2 * math.log(theta))

            low = max(math.floor(turning(32.0)), 0)
            high = min(math.ceil(turning(1.0)), hd - 1)
            if low == high:
                high += 0.001
            i = torch.arange(len(f), dtype=DT)
            keep = 1.0 - torch.clamp((i - low) / (high - low), 0.0, 1.0)
            self.freq = keep * f + (1 - keep) * f / s
            self.mscale = 0.1 * math.log(s) + 1.0
        else:
            raise ValueError(f"unknown rope scaling {scaling}")

    def angles(self, positions):
        p = positions.to(DT) / self.pos_div
        return p[:, None] * self.freq[None, :]


class Model:
    def __init__(self, ckpt_path):
        self.w, self.meta = load_safetensors(ckpt_path)
        self.cfg = Config(self.meta)
        c = self.cfg
        for name, t in self.w.items():
            if not torch.isfinite(t).all():
                raise ValueError(f"{ckpt_path}: tensor {name} is not finite")
        assert self.w["transformer.wte.weight"].shape == (c.vocab_size, c.n_embd)

    # scaling in None|linear|ntk|yarn with one s per window, or "dynamic" (s per row)
    def forward(self, ids, scaling=None, s=1.0, mutant=None):
        """ids (B, T) -> logits (B, T, V) in float64."""
        c, w = self.cfg, self.w
        B, T = ids.shape
        # x = e * wte[ids]: e = sqrt(d) for embedding = scaled, 1 for gpt2
        e = math.sqrt(c.n_embd) if c.embedding == "scaled" else 1.0
        if mutant == "scale_ignored":  # wrong: the embedding key not read
            e = 1.0
        x = e * w["transformer.wte.weight"][ids]
        if c.pe == "learned":
            if T > c.max_len:
                raise ValueError(f"window length {T} exceeds max_len {c.max_len}")
            if mutant != "no_wpe":
                x = x + w["transformer.wpe.weight"][:T]
        elif c.pe == "sinusoidal":
            tab = sinusoidal_table(T, c.n_embd)
            if mutant == "sin_concat":  # wrong layout: [sin..., cos...]
                tab = torch.cat([tab[:, 0::2], tab[:, 1::2]], dim=1)
            if mutant == "scaled_table":  # wrong: the table multiplied by e as well
                tab = e * tab
            x = x + tab
        for i in range(c.n_layer):
            p = f"transformer.h.{i}."
            h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
            x = x + self.attention(h, p + "attn.", scaling, s, mutant)
            h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
            h = linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"])
            h = gelu_tanh(h)
            h = linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
            x = x + h
        x = layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"])
        head = w["transformer.wte.weight"]  # tied, and unscaled
        if mutant == "scaled_head":  # wrong: the input's factor e on the head too
            head = e * head
        return x @ head.t()

    def attention(self, x, p, scaling, s, mutant):
        c, w = self.cfg, self.w
        B, T, d = x.shape
        H, hd = c.n_head, c.hd
        qkv = linear(x, w[p + "c_attn.weight"], w[p + "c_attn.bias"])
        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
        q = q.reshape(B, T, H, hd).transpose(1, 2)  # (B,H,T,hd)
        k = k.reshape(B, T, H, hd).transpose(1, 2)
        v = v.reshape(B, T, H, hd).transpose(1, 2)
        pos = torch.arange(T)
        bias = torch.zeros(H, T, T, dtype=DT)
        if c.pe == "alibi":
            sl = alibi_slopes(H)
            if mutant == "alibi_pow2_slopes":  # wrong: 2^(-8(h+1)/H) for any H
                sl = [2.0 ** (-8.0 * (h + 1) / H) for h in range(H)]
            m = torch.tensor(sl, dtype=DT)[:, None, None]
            diff = (pos[:, None] - pos[None, :]).to(DT)  # i - j
            bias = -m * (diff if c.causal else diff.abs())
            if mutant == "alibi_scaled":  # wrong: bias divided by sqrt(hd) too
                bias = bias / math.sqrt(hd)
        if c.pe == "t5":
            sign = -1 if mutant == "t5_reversed" else 1  # wrong: rel = j - i
            table = w["transformer.rel_bias.weight"]  # (num_buckets, H)
            idx = torch.tensor([[t5_bucket(sign * (i - j), c.causal, c.t5_buckets,
                                           c.t5_max_distance) for j in range(T)]
                                for i in range(T)])
            bias = table[idx].permute(2, 0, 1)  # (H, T, T)
        mask = torch.ones(T, T, dtype=torch.bool)
        if c.causal:
            mask = torch.tril(mask)

        if c.pe == "rope" and scaling == "dynamic" and mutant != "dynamic_as_ntk":
            return self.dynamic_attention(q, k, v, p, bias, mask)

        if c.pe == "rope":
            if mutant == "dynamic_as_ntk":
                scaling = "ntk"
            plan = RopePlan(c, scaling, s)
            ang = plan.angles(pos)
            ms = 1.0 if mutant == "yarn_no_mscale" else plan.mscale
            layout = c.rope_layout
            if mutant == "rope_other_layout":  # wrong: the other pairing of dims
                layout = "half" if layout == "interleaved" else "interleaved"
            if mutant == "rope_all_dims":  # wrong: rotate all hd dims, ignoring rope_fraction
                ang = RopePlan(FullRope(c), scaling, s).angles(pos)
            q, k = rotate(q, ang, ms, layout), rotate(k, ang, ms, layout)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + bias
        att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, d)
        return linear(y, w[p + "c_proj.weight"], w[p + "c_proj.bias"])

    def dynamic_attention(self, q, k, v, p, bias, mask):
        """Dynamic NTK, row by row: the prediction at position i is made at length
        i+1 with s = max(1, (i+1)/T0) and the ntk theta, for query i and keys j <= i.
        Earlier tokens' hidden states come from their own rows (KV-cache decoding
        with pre-RoPE keys)."""
        c, w = self.cfg, self.w
        B, H, T, hd = q.shape
        T0 = c.block_size
        pos = torch.arange(T)
        y = torch.zeros_like(q)
        for i in range(T):
            s_i = max(1.0, (i + 1) / T0)
            plan = RopePlan(c, "ntk", s_i)
            ang = plan.angles(pos[:i + 1])
            qi = rotate(q[:, :, i:i + 1], ang[i:i + 1], layout=c.rope_layout)
            kj = rotate(k[:, :, :i + 1], ang, layout=c.rope_layout)
            sc = (qi @ kj.transpose(-1, -2)) / math.sqrt(hd) + bias[:, i:i + 1, :i + 1]
            sc = torch.softmax(sc, dim=-1)
            y[:, :, i:i + 1] = sc @ v[:, :, :i + 1]
        y = y.transpose(1, 2).reshape(B, T, H * hd)
        return linear(y, w[p + "c_proj.weight"], w[p + "c_proj.bias"])


class FullRope:
    """A config seen as if rope_fraction were 1 -- only for the sensitivity check."""

    def __init__(self, cfg):
        self.rope_r, self.rope_theta, self.block_size = cfg.hd, cfg.rope_theta, cfg.block_size


# --------------------------------------------------------------------------- docs/evaluation.md
def evaluate(model, data_dir, L, split="val", windows=None, n_buckets=16,
             scaling=None, factor=None, mutant=None):
    c = model.cfg
    vocab = read_vocab(f"{data_dir}/vocab.json")
    if len(vocab) != c.vocab_size:
        raise ValueError(f"{data_dir}/vocab.json: {len(vocab)} entries, "
                         f"checkpoint vocab_size {c.vocab_size}")
    if scaling not in (None, "none") and c.pe != "rope":
        raise ValueError("--rope-scaling needs pe = rope")
    toks = read_bin(f"{data_dir}/{split}.bin")
    if len(toks) and int(toks.max()) >= c.vocab_size:
        raise ValueError(f"{split}.bin: token id >= vocab size")
    n = len(toks)
    if n < L + 1:
        raise ValueError(f"split of {n} tokens shorter than L+1 = {L + 1}")
    fit = (n - 1) // L  # windows at 0, L, 2L, ... with o + L + 1 <= n
    W = fit if windows is None else min(windows, fit)
    s = factor if factor is not None else max(1.0, L / c.block_size)
    ce = torch.zeros(W, L, dtype=DT)
    for wi in range(W):  # each window on its own, from position 0
        o = wi * L
        inp = toks[o:o + L][None, :]
        tgt = toks[o + 1:o + L + 1]
        if mutant == "dynamic_prefix":
            # wrong reading: re-run the whole prefix 0..i with one ntk s = (i+1)/T0, so
            # earlier tokens' deeper hidden states change too (not KV-cache decoding)
            logits = torch.stack([
                model.forward(inp[:, :i + 1], "ntk", max(1.0, (i + 1) / c.block_size))[0, -1]
                for i in range(L)])
        else:
            logits = model.forward(inp, scaling, s, mutant)[0]
        logp = torch.log_softmax(logits, dim=-1)
        ce[wi] = -logp[torch.arange(L), tgt]
    loss = ce.mean().item()
    buckets = []
    for b in range(n_buckets):
        st, en = (b * L) // n_buckets, ((b + 1) * L) // n_buckets
        bl = ce[:, st:en].mean().item() if en > st else float("nan")
        buckets.append({"start": st, "end": en, "loss": bl})
    return {"loss": loss, "ppl": math.exp(loss), "tokens": L * W, "len": L,
            "windows": W, "buckets": buckets}


# --------------------------------------------------------------------------- CLI
def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


SENSITIVITY = {  # (pe, scaling) -> a plausible wrong reading of docs/model.md
    ("rope", "none"): "rope_other_layout",  # on an interleaved model: the half split
    ("rope", "linear"): "rope_other_layout",
    ("rope", "ntk"): "rope_other_layout",
    ("rope", "dynamic"): ("dynamic_as_ntk", "dynamic_prefix"),
    ("rope", "yarn"): "yarn_no_mscale",
    ("sinusoidal", "none"): "sin_concat",
    ("alibi", "none"): ("alibi_scaled", "alibi_pow2_slopes"),
    ("learned", "none"): "no_wpe",
    ("t5", "none"): "t5_reversed",
}
# For embedding = scaled, on every pe: readings that get the factor e = sqrt(d) wrong.
SCALED_SENSITIVITY = ("scale_ignored", "scaled_head")
SCALED_PE_SENSITIVITY = {"sinusoidal": "scaled_table"}


def compare(manifest, tol, sensitivity):
    models = {}
    bad = 0
    print(f"{'checkpoint':<22} {'pe':<11} {'scaling':<12} {'L':>4} {'ours':>12} {'reference':>14} {'rel diff':>10}"
          f" {'max bucket':>10}  result")
    with open(manifest) as f:
        lines = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
    maxlen = {}
    for _, _, ck, _, L, _, sc, fa in lines:
        key = (ck, None if sc == "none" else sc, None if fa == "-" else float(fa))
        maxlen[key] = max(maxlen.get(key, 0), int(L))
    for label, ours_path, ckpt, data, L, windows, scaling, factor in lines:
        L, windows = int(L), int(windows)
        scaling = None if scaling == "none" else scaling
        factor = None if factor == "-" else float(factor)
        if ckpt not in models:
            models[ckpt] = Model(ckpt)
        m = models[ckpt]
        with open(ours_path) as f:
            ours = json.loads(f.read().strip().splitlines()[-1])
        ref = evaluate(m, data, L, windows=windows, n_buckets=len(ours["buckets"]),
                       scaling=scaling, factor=factor)
        problems = []
        d = rel(ours["loss"], ref["loss"])
        if not d <= tol:
            problems.append("loss")
        if not rel(ours["ppl"], ref["ppl"]) <= tol:
            problems.append("ppl")
        for key in ("tokens", "len", "windows"):
            if key in ours and ours[key] != ref[key]:
                problems.append(f"{key} {ours[key]}!={ref[key]}")
        bmax = 0.0
        for ob, rb in zip(ours["buckets"], ref["buckets"]):
            if (ob["start"], ob["end"]) != (rb["start"], rb["end"]):
                problems.append(f"bucket range {ob['start']}-{ob['end']} vs "
                                f"{rb['start']}-{rb['end']}")
                continue
            bd = rel(ob["loss"], rb["loss"])
            bmax = max(bmax, bd) if bd == bd else float("inf")
        if not bmax <= tol:
            problems.append("buckets")
        sc = (scaling or "none") + (f"/f={factor:g}" if factor is not None else "")
        if len(ours["buckets"]) != 16:
            sc += f"/b={len(ours['buckets'])}"
        verdict = "ok" if not problems else "FAIL(" + ", ".join(problems) + ")"
        print(f"{label:<22} {m.cfg.pe:<11} {sc:<12} {L:>4} {ours['loss']:>12.7f} {ref['loss']:>14.9f}"
              f" {d:>10.2e} {bmax:>10.2e}  {verdict}", flush=True)
        bad += bool(problems)
        muts = SENSITIVITY.get((m.cfg.pe, scaling or "none"), ())
        muts = (muts,) if isinstance(muts, str) else muts
        if m.cfg.pe == "rope" and m.cfg.rope_r < m.cfg.hd and scaling in (None, "ntk"):
            muts = muts + ("rope_all_dims",)
        if m.cfg.embedding == "scaled" and scaling is None:
            muts = muts + SCALED_SENSITIVITY + tuple(
                [SCALED_PE_SENSITIVITY[m.cfg.pe]] if m.cfg.pe in SCALED_PE_SENSITIVITY else [])
        if (sensitivity and L == maxlen[(ckpt, scaling, factor)]
                and len(ours["buckets"]) == 16):
            for mut in muts:
                if mut == "alibi_pow2_slopes" and m.cfg.n_head & (m.cfg.n_head - 1) == 0:
                    continue
                wrong = evaluate(m, data, L, windows=windows, scaling=scaling,
                                 factor=factor, mutant=mut)
                dm = rel(wrong["loss"], ref["loss"])
                note = "discriminates" if dm > 10 * tol else "WEAK: test cannot tell"
                print(f"{'':<22} sensitivity: reference with '{mut}' gives "
                      f"{wrong['loss']:.7f}, rel diff {dm:.2e} ({note})", flush=True)
    return bad


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--ckpt", required=True)
    e.add_argument("--data", required=True)
    e.add_argument("--len", type=int, default=1024)
    e.add_argument("--split", default="val")
    e.add_argument("--windows", type=int)
    e.add_argument("--buckets", type=int, default=16)
    e.add_argument("--rope-scaling", choices=["linear", "ntk", "dynamic", "yarn"])
    e.add_argument("--factor", type=float)
    sy = sub.add_parser("synth")
    sy.add_argument("--out", required=True)
    sy.add_argument("--pe", required=True)
    sy.add_argument("--layers", type=int, default=2)
    sy.add_argument("--heads", type=int, default=4)
    sy.add_argument("--d", type=int, default=32)
    sy.add_argument("--data", required=True, help="prepared corpus (for vocab_size)")
    sy.add_argument("--ctx", type=int, default=32)
    sy.add_argument("--max-len", type=int)
    sy.add_argument("--theta", type=float, default=10000.0)
    sy.add_argument("--causal", default="true")
    sy.add_argument("--seed", type=int, default=0)
    sy.add_argument("--attn-std", type=float, help="std of c_attn (default 0.3)")
    sy.add_argument("--rope-layout", choices=["interleaved", "half"])
    sy.add_argument("--rope-fraction", type=float)
    sy.add_argument("--t5-buckets", type=int, default=32)
    sy.add_argument("--t5-max-distance", type=int, default=128)
    sy.add_argument("--embedding", help="metadata value (default: no key, read as gpt2)")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("manifest")
    cmp_.add_argument("--tol", type=float, default=1e-4)
    cmp_.add_argument("--sensitivity", action="store_true")
    a = ap.parse_args()
    if a.cmd == "eval":
        if a.factor is not None and (a.rope_scaling is None or a.rope_scaling == "dynamic"
                                     or a.factor < 1):
            sys.exit("--factor needs --rope-scaling linear|ntk|yarn and s >= 1")
        r = evaluate(Model(a.ckpt), a.data, a.len, a.split, a.windows, a.buckets,
                     a.rope_scaling, a.factor)
        print(json.dumps(r))
        return 0
    if a.cmd == "synth":
        V = len(read_vocab(f"{a.data}/vocab.json"))
        synth_checkpoint(a.out, a.pe, a.layers, a.heads, a.d, V, a.ctx, a.max_len,
                         a.theta, a.causal == "true", a.seed, attn_std=a.attn_std,
                         rope_layout=a.rope_layout, rope_fraction=a.rope_fraction,
                         t5_buckets=a.t5_buckets, t5_max_distance=a.t5_max_distance,
                         embedding=a.embedding)
        return 0
    bad = compare(a.manifest, a.tol, a.sensitivity)
    print(f"{bad} comparison(s) failed" if bad else "all comparisons agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
