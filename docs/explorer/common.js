// common.js — what every view shares: the schemes and their colours, the language toggle, the
// worker (every number comes from there: poslab's C++ in WebAssembly), the vocabulary and the
// val text, the loss colour scale, and the cache of evaluated windows. No framework: PX is one
// plain object, each view script adds itself to PX.views.
"use strict";
const PX = {
  // The study's colour per scheme (study/report_plots.cpp), everywhere on the page.
  SCHEMES: [
    { name: "none", color: "#000000", zh: "无位置编码 (NoPE)", en: "none (NoPE)" },
    { name: "learned", color: "#E69F00", zh: "learned 可学习", en: "learned" },
    { name: "sinusoidal", color: "#009E73", zh: "sinusoidal 正弦", en: "sinusoidal" },
    { name: "rope", color: "#0072B2", zh: "RoPE 旋转", en: "RoPE" },
    { name: "alibi", color: "#D55E00", zh: "ALiBi", en: "ALiBi" },
    { name: "t5", color: "#CC79A7", zh: "T5 相对偏置", en: "T5 bias" },
  ],
  views: {},
  info: {},      // scheme -> the model's config (px_info), once loaded
  failed: {},    // scheme -> why it did not load
  vocab: [],     // id -> character
  index: new Map(),  // character -> id
  val: null,     // Uint16Array: the first tokens of the val split (data/val.bin)
  T0: 256,
};

// ---- language: Chinese first, English one click away ----
PX.bi = (zh, en) => `<span class="zh">${zh}</span><span class="en">${en}</span>`;
PX.lang = () => (document.body.classList.contains("lang-en") ? "en" : "zh");
PX.setLang = (lang) => {
  document.body.classList.toggle("lang-en", lang === "en");
  document.body.classList.toggle("lang-zh", lang !== "en");
  document.documentElement.lang = lang === "en" ? "en" : "zh";
  document.getElementById("lang-toggle").textContent = lang === "en" ? "中文" : "English";
};
PX.scheme = (name) => PX.SCHEMES.find((s) => s.name === name) || { name, color: "#777", zh: name, en: name };
PX.label = (name) => PX.bi(PX.scheme(name).zh, PX.scheme(name).en);
PX.loaded = () => PX.SCHEMES.map((s) => s.name).filter((n) => n in PX.info);
PX.esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

// ---- the worker: PX.call(op, args, onProgress) -> Promise ----
PX.worker = new Worker("worker.js");
PX.pending = new Map();
PX.nextId = 0;
PX.worker.onmessage = (e) => {
  const { id, result, error, progress } = e.data;
  const p = PX.pending.get(id);
  if (!p) return;
  if (progress !== undefined) return p.onProgress && p.onProgress(progress);
  PX.pending.delete(id);
  if (error !== undefined) p.reject(new Error(error));
  else p.resolve(result);
};
PX.worker.onerror = (e) => PX.fatal("worker: " + (e.message || "failed to start"));
PX.call = (op, args, onProgress) => new Promise((resolve, reject) => {
  const id = ++PX.nextId;
  PX.pending.set(id, { resolve, reject, onProgress });
  PX.worker.postMessage({ id, op, args });
});

// ---- text in and out of token ids ----
// Characters outside the vocabulary are shown (PX.renderText marks them) and read as a space.
PX.encode = (text) => {
  const chars = Array.from(text), ids = [], unknown = [];
  const space = PX.index.get(" ");
  chars.forEach((c, i) => {
    if (PX.index.has(c)) ids.push(PX.index.get(c));
    else { ids.push(space); unknown.push({ i, c }); }
  });
  return { chars, ids, unknown };
};
PX.decode = (ids) => Array.from(ids, (i) => PX.vocab[i]).join("");
PX.valWindow = (start, n) => Array.from(PX.val.subarray(start, start + n));
PX.unknownNote = (unknown) => unknown.length === 0 ? "" : PX.bi(
  `${unknown.length} 个字符不在模型的词表里（虚线框标出，例如 “${PX.esc(unknown[0].c)}”），模型把它们当作空格读。`,
  `${unknown.length} character(s) are not in the models' vocabulary (dashed outline, e.g. "${PX.esc(unknown[0].c)}"); the models read each as a space.`);

// ---- loss as colour: 0 nats white, then yellow, orange, red at 6 nats and beyond ----
PX.LOSS_STOPS = [[0, [255, 255, 255]], [1, [255, 241, 168]], [2.5, [253, 174, 97]], [4, [229, 72, 52]], [6, [140, 16, 30]]];
PX.lossRGB = (l) => {
  const S = PX.LOSS_STOPS;
  if (!(l > 0)) return S[0][1];
  for (let k = 1; k < S.length; ++k)
    if (l <= S[k][0]) {
      const t = (l - S[k - 1][0]) / (S[k][0] - S[k - 1][0]);
      return S[k][1].map((v, c) => Math.round(S[k - 1][1][c] + t * (v - S[k - 1][1][c])));
    }
  return S[S.length - 1][1];
};
PX.lossColor = (l) => `rgb(${PX.lossRGB(l).join(",")})`;
PX.lossText = (l) => (l > 3.2 ? "#fff" : "#000");
PX.scaleBar = () => {
  const g = PX.LOSS_STOPS.map(([v, c]) => `rgb(${c.join(",")}) ${(v / 6) * 100}%`).join(",");
  return `<span class="scale">0<span class="bar" style="background:linear-gradient(90deg,${g})"></span>6+ ${PX.bi("奈特（nats）", "nats")}</span>`;
};

// Characters as spans (data-i = their index), newline shown as ↵ and tab as →; style(i) gives
// each span's colours. The first character of a window is not predicted: style gets i >= 0.
PX.renderText = (el, chars, style, unknownAt = new Set()) => {
  const parts = chars.map((c, i) => {
    const shown = c === "\n" ? '<span class="eol">↵</span>\n' : c === "\t" ? "→   " : PX.esc(c);
    const cls = "c" + (unknownAt.has(i) ? " oov" : "");
    return `<span class="${cls}" data-i="${i}" style="${style(i)}">${shown}</span>`;
  });
  el.innerHTML = parts.join("");
};

// ---- progress: a bar, "what · k/n · seconds", ticking while the worker computes ----
PX.progress = (el) => {
  const t0 = performance.now();
  let text = "", frac = 0;
  const draw = () => {
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    el.innerHTML = `<span class="progress"><div style="width:${(frac * 100).toFixed(0)}%"></div></span> ${text} · ${s} s`;
  };
  const timer = setInterval(draw, 100);
  return {
    set(t, f) { text = t; frac = f; draw(); },
    done(t) { clearInterval(timer); el.innerHTML = t || ""; },
  };
};

// ---- windows, evaluated once: key -> {mean, losses, ms} ----
PX.cache = new Map();
PX.evalWindow = async (name, ids, opts = {}) => {
  const key = JSON.stringify([name, ids.length, PX.hash(ids), opts]);
  if (!PX.cache.has(key)) {
    const r = await PX.call("eval", Object.assign({ name, ids }, opts));
    PX.cache.set(key, r);
    if (PX.cache.size > 400) PX.cache.delete(PX.cache.keys().next().value);
  }
  return PX.cache.get(key);
};
PX.hash = (ids) => {
  let h = 2166136261;
  for (const x of ids) h = Math.imul(h ^ x, 16777619);
  return h >>> 0;
};

// Means of L per-position values in buckets of width w: [{x: centre, y: mean}].
PX.buckets = (values, w) => {
  const out = [];
  for (let s = 0; s < values.length; s += w) {
    const e = Math.min(values.length, s + w);
    let acc = 0;
    for (let i = s; i < e; ++i) acc += values[i];
    out.push({ x: (s + e) / 2, y: acc / (e - s) });
  }
  return out;
};

// Runs one view's work at a time: a newer run makes an older one's results be dropped.
PX.latest = () => {
  let generation = 0;
  return async (work) => {
    const mine = ++generation;
    const stale = () => mine !== generation;
    return work(stale);
  };
};

PX.fatal = (msg) => {
  document.getElementById("status").innerHTML = `<div class="error">${PX.esc(msg)}</div>`;
};

// ---- start: vocabulary, val text, then the six models, one after another ----
PX.start = async () => {
  document.getElementById("lang-toggle").onclick = () => PX.setLang(PX.lang() === "zh" ? "en" : "zh");
  PX.setLang(new URLSearchParams(location.search).get("lang") === "en" ? "en" : "zh");
  const status = document.getElementById("status");
  document.getElementById("legend").innerHTML = PX.SCHEMES.map((s) =>
    `<span><span class="swatch" style="background:${s.color}"></span>${PX.label(s.name)}</span>`).join("");
  try {
    PX.vocab = await (await fetch("data/vocab.json")).json();
    PX.vocab.forEach((c, i) => PX.index.set(c, i));
    PX.val = new Uint16Array(await (await fetch("data/val.bin")).arrayBuffer());
  } catch (e) {
    return PX.fatal("data/: " + e.message);
  }
  const bar = PX.progress(status);
  let k = 0;
  for (const s of PX.SCHEMES) {
    bar.set(PX.bi("加载模型 ", "loading ") + s.name, k++ / PX.SCHEMES.length);
    try {
      PX.info[s.name] = await PX.call("load", { name: s.name, url: `models/${s.name}.safetensors` });
    } catch (e) {
      PX.failed[s.name] = e.message;
    }
  }
  const first = PX.info[PX.loaded()[0]];
  if (first) PX.T0 = first.block_size;
  const fails = Object.entries(PX.failed).map(([n, m]) =>
    `<div class="error">${PX.bi("模型加载失败", "model failed to load")} ${n}: ${PX.esc(m)}</div>`).join("");
  bar.done(PX.bi(
    `${PX.loaded().length} 个模型已加载（每个 ${first ? first.n_layer : "?"} 层、${first ? first.n_head : "?"} 头、d = ${first ? first.n_embd : "?"}，训练长度 T0 = ${PX.T0}），全部在你的浏览器里计算。`,
    `${PX.loaded().length} models loaded (each ${first ? first.n_layer : "?"} layers, ${first ? first.n_head : "?"} heads, d = ${first ? first.n_embd : "?"}, trained at T0 = ${PX.T0}), all computed in your browser.`) + fails);
  for (const v of Object.values(PX.views)) v.init();
  PX.ready = true;
  for (const v of Object.values(PX.views)) if (v.auto) v.run();
};
window.addEventListener("DOMContentLoaded", () => PX.start());
