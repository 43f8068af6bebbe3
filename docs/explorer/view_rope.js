// view_rope.js — view 5: RoPE's pairs as a formula view. Pair i of a head of D dims turns by
// angle p * w_i at position p, w_i = theta^(-2i/D): wavelength 2 pi / w_i. The scaled
// frequencies come from poslab's C++ (px_rope_frequencies = posenc/rope_scaling.cpp's
// rope_frequencies, what eval --rope-scaling uses; YaRN's two ramps from yarn_keep and
// yarn_keep_paper); only the drawing and q.k = mean_i m^2 cos(offset w_i) are done here.
"use strict";
PX.views.rope = {
  auto: true,
  SCALINGS: [
    { kind: "none", color: "#0072B2", zh: "原始 RoPE", en: "plain RoPE" },
    { kind: "linear", color: "#D55E00", zh: "linear（位置 / s）", en: "linear (p / s)" },
    { kind: "ntk", color: "#009E73", zh: "NTK（换底 θ'）", en: "NTK (base θ')" },
    { kind: "yarn", color: "#CC79A7", zh: "YaRN 部署的坡道", en: "YaRN, deployed ramp" },
    { kind: "yarn-paper", color: "#CC79A7", dashed: true, zh: "YaRN 论文的坡道", en: "YaRN, paper's ramp" },
    { kind: "llama3", color: "#E69F00", zh: "Llama 3", en: "Llama 3" },
  ],
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    for (const id of ["rope-theta", "rope-dim", "rope-t0", "rope-s"]) {
      $(id).oninput = () => this.run();
    }
    $("rope-legend").innerHTML = this.SCALINGS.map((s) =>
      `<span><span class="swatch" style="background:${s.color};${s.dashed ? "opacity:0.5" : ""}"></span>${PX.bi(s.zh, s.en)}</span>`).join("");
  },
  params() {
    const $ = this.$;
    const p = {
      theta: +(10 ** +$("rope-theta").value).toPrecision(3),
      D: +$("rope-dim").value,
      T0: 2 ** +$("rope-t0").value,
      s: +(2 ** +$("rope-s").value).toPrecision(4),
    };
    $("rope-theta-v").textContent = p.theta;
    $("rope-dim-v").textContent = p.D;
    $("rope-t0-v").textContent = p.T0;
    $("rope-s-v").textContent = p.s;
    return p;
  },
  run() {
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const p = this.params(), L = Math.round(p.s * p.T0);
    const freq = {};
    try {
      for (const k of ["none", "linear", "ntk", "yarn", "llama3"])
        freq[k] = (await PX.call("rope", { D: p.D, theta: p.theta, scaling: k, s: p.s, T0: p.T0, L })).freq;
      const paper = await PX.call("yarnKeep", { D: p.D, theta: p.theta, T0: p.T0, paper: true });
      freq["yarn-paper"] = freq.none.map((w, i) => paper[i] * w + (1 - paper[i]) * (w / p.s));
      this.$("rope-msg").innerHTML = "";
    } catch (e) {
      this.$("rope-msg").innerHTML = `<div class="error">${PX.esc(e.message)}</div>`;
      return;
    }
    if (stale()) return;
    this.result = { p, freq };
    this.draw(p, freq);
  },

  draw(p, freq) {
    const $ = this.$, zh = PX.lang() === "zh", pairs = p.D / 2;
    const lines = (f) => this.SCALINGS.filter((s) => s.kind in freq)
      .map((s) => ({ points: f(freq[s.kind]), color: s.color, dashed: s.dashed, width: s.dashed ? 2 : 1.6, label: s.en }));
    const hl = [{ y: p.T0, label: "T0", color: "#444" }, { y: p.s * p.T0, label: "s·T0", color: "#999" }];
    PX.chart($("rope-wave"), {
      series: lines((w) => w.map((x, i) => ({ x: i, y: (2 * Math.PI) / x }))),
      x: { min: 0, max: pairs - 1, label: zh ? "维度对 i" : "pair i" },
      y: { log: true, label: zh ? "波长（位置）" : "wavelength (positions)" },
      hlines: hl,
    });
    const keep = (w) => w.map((x, i) => ({ x: i, y: p.s > 1 ? (x / freq.none[i] - 1 / p.s) / (1 - 1 / p.s) : 1 }));
    PX.chart($("rope-keep"), {
      series: lines(keep).filter((s) => s.label !== "plain RoPE"),
      x: { min: 0, max: pairs - 1, label: zh ? "维度对 i" : "pair i" },
      y: { min: -0.05, max: 1.05, label: zh ? "保留的比例" : "share kept" },
    });
    // q.k at integer offsets (every one up to 8192, then evenly spaced), as means over
    // buckets of about 1/300 of the range: the trend, not the fast pairs' flicker
    const maxOff = Math.round(2 * p.s * p.T0), step = Math.max(1, Math.floor(maxOff / 8192));
    const qk = (w) => {
      const v = [];
      for (let d = 0; d <= maxOff; d += step) {
        let acc = 0;
        for (const x of w) acc += Math.cos(d * x);
        v.push(acc / w.length);
      }
      return PX.buckets(v, Math.max(1, Math.round(v.length / 300))).map((b) => ({ x: b.x * step, y: b.y }));
    };
    PX.chart($("rope-qk"), {
      series: lines(qk),
      x: { min: 0, max: maxOff, label: zh ? "距离 m − n" : "offset m − n" },
      y: { min: -0.3, max: 1, label: "q·k / |q||k|" },
      vlines: [{ x: p.T0, label: "T0", color: "#444" }, { x: p.s * p.T0, label: "s·T0", color: "#999" }],
    });
  },
};
