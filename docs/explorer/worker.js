// worker.js — the Web Worker that holds poslab (poslab.js + poslab.wasm, poslab's own C++ built
// by emscripten: explorer/wasm_api.cpp) and the models, so the page never freezes while a
// model reads. The page sends {id, op, args}; the worker answers {id, result} or {id, error},
// and {id, progress} on the way. Each op below is one call (or a loop of calls) into the
// entry layer; the worker copies arrays in and out of WebAssembly memory and computes nothing
// itself.
importScripts("poslab.js");

let M = null;            // the emscripten module
const models = {};       // name -> handle
const ready = createPoslab().then((m) => { M = m; });

// ---- arrays in and out of WebAssembly memory ----
function withInts(values, f) {
  const p = M._malloc(Math.max(4, values.length * 4));
  M.HEAP32.set(values, p >> 2);
  try { return f(p); } finally { M._free(p); }
}
function withBuffer(bytes, f) {
  const p = M._malloc(Math.max(8, bytes));
  try { return f(p); } finally { M._free(p); }
}
function withString(s, f) {
  const n = M.lengthBytesUTF8(s) + 1;
  const p = M._malloc(n);
  M.stringToUTF8(s, p, n);
  try { return f(p); } finally { M._free(p); }
}
const f64 = (p, n) => Array.from(M.HEAPF64.subarray(p >> 3, (p >> 3) + n));
const f32 = (p, n) => Float32Array.from(M.HEAPF32.subarray(p >> 2, (p >> 2) + n));
const i32 = (p, n) => Int32Array.from(M.HEAP32.subarray(p >> 2, (p >> 2) + n));
function check(ok) {
  if (!ok) throw new Error(M.UTF8ToString(M._px_error()));
}
function handle(name) {
  if (!(name in models)) throw new Error("model " + name + " is not loaded");
  return models[name];
}

// ---- the ops ----
const ops = {
  // Fetches models/<name>.safetensors and loads it; returns its config.
  async load({ name, url }) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(url + ": HTTP " + r.status);
    const bytes = new Uint8Array(await r.arrayBuffer());
    const h = withBuffer(bytes.length, (p) => {
      M.HEAPU8.set(bytes, p);
      return M._px_load(p, bytes.length);
    });
    check(h >= 0);
    models[name] = h;
    return JSON.parse(M.UTF8ToString(M._px_info(h)));
  },
  // An untrained model of the given shape (seeded), for the ordering view.
  random({ name, pe, causal, vocab, layers, heads, d, ctx, seed }) {
    if (name in models) M._px_free(models[name]);
    const h = withString(pe, (s) => M._px_random(s, causal ? 1 : 0, vocab, layers, heads, d, ctx, seed));
    check(h >= 0);
    models[name] = h;
    return JSON.parse(M.UTF8ToString(M._px_info(h)));
  },
  // One window: per-target losses and their mean (px_eval = poslab eval's evaluate).
  eval({ name, ids, offset = 0, window = 0, logScale = false, scaling = "none", factor = 0 }) {
    const h = handle(name), L = ids.length - 1;
    const t0 = performance.now();
    return withInts(ids, (pi) => withBuffer(8 * Math.max(L, 1), (po) => withString(scaling, (ps) => {
      const mean = M._px_eval(h, pi, ids.length, offset, window, logScale ? 1 : 0, ps, factor, po);
      check(!Number.isNaN(mean));
      return { mean, losses: f64(po, L), ms: performance.now() - t0 };
    })));
  },
  // The T0 sliding-window reference for the same targets (px_sliding).
  sliding({ name, ids, window }) {
    const h = handle(name), L = ids.length - 1;
    return withInts(ids, (pi) => withBuffer(8 * L, (po) => {
      check(M._px_sliding(h, pi, ids.length, window, po) === 0);
      return f64(po, L);
    }));
  },
  // Top-k next characters per position; the attention maps stay in the worker for row().
  inspect({ name, ids, k }) {
    const h = handle(name), n = ids.length;
    return withInts(ids, (pi) => withBuffer(4 * n * k, (pids) => withBuffer(4 * n * k, (pp) => {
      check(M._px_inspect(h, pi, n, k, pids, pp) === 0);
      return { ids: i32(pids, n * k), p: f32(pp, n * k) };
    })));
  },
  // Where query i attends: (layers, heads, n) weights.
  row({ name, i, layers, heads, n }) {
    const h = handle(name);
    return withBuffer(4 * layers * heads * n, (po) => {
      check(M._px_attention_row(h, i, po) === 0);
      return f32(po, layers * heads * n);
    });
  },
  logits({ name, ids, vocab }) {
    const h = handle(name), n = ids.length;
    return withInts(ids, (pi) => withBuffer(4 * n * vocab, (po) => {
      check(M._px_logits(h, pi, n, po) === 0);
      return f32(po, n * vocab);
    }));
  },
  // Generation: the prompt, then one character at a time (progress carries each new id).
  generate({ name, ids, tokens, temperature, seed, scaling = "none", factor = 0 }, progress) {
    const h = handle(name);
    withInts(ids, (pi) => withString(scaling, (ps) =>
      check(M._px_gen_start(h, pi, ids.length, ids.length + tokens, ps, factor, seed) === 0)));
    const out = [];
    for (let i = 0; i < tokens; ++i) {
      const next = M._px_gen_next(h, temperature);
      check(next >= 0);
      out.push(next);
      if (i % 8 === 7 || i + 1 === tokens) progress(out.slice());
    }
    return out;
  },
  // RoPE's frequencies under a scaling (angle per position of each pair) and the cos/sin factor.
  rope({ D, theta, scaling, s, T0, L }) {
    return withString(scaling, (ps) => withBuffer(8 * D, (po) => {
      const mscale = M._px_rope_frequencies(D, theta, ps, s, T0, L, po);
      check(!Number.isNaN(mscale));
      return { freq: f64(po, D / 2), mscale };
    }));
  },
  yarnKeep({ D, theta, T0, paper }) {
    return withBuffer(8 * D, (po) => {
      check(M._px_yarn_keep(D, theta, T0, paper ? 1 : 0, po) === 0);
      return f64(po, D / 2);
    });
  },
  memory() {
    return withBuffer(24, (po) => {
      M._px_memory(po);
      const [wasm, peak, inUse] = f64(po, 3);
      return { wasm, peak, inUse };
    });
  },
};

onmessage = async (e) => {
  const { id, op, args } = e.data;
  try {
    await ready;
    if (!(op in ops)) throw new Error("unknown op " + op);
    const result = await ops[op](args || {}, (p) => postMessage({ id, progress: p }));
    postMessage({ id, result });
  } catch (err) {
    postMessage({ id, error: String(err && err.message ? err.message : err) });
  }
};
