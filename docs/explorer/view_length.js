// view_length.js — view 2: one window of L characters of val text (from its start, the first
// window poslab eval --len L reads) through every model, loss against position, with T0 marked.
// Dashed: the same model reading the same characters through sliding windows of T0 (px_sliding,
// the reference of docs/evaluation.md), i.e. what it scores when it never leaves T0.
"use strict";
PX.views.length = {
  auto: true,
  LENGTHS: [64, 128, 256, 512, 1024, 2048, 4096],
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    $("length-slider").oninput = () => this.label();
    $("length-slider").onchange = () => this.run();
    $("length-sliding").onchange = () => this.run();
    this.label();
  },
  L() { return this.LENGTHS[+this.$("length-slider").value]; },
  label() {
    this.$("length-value").innerHTML = `${this.L()} <span class="note">(T0 = ${PX.T0})</span>`;
  },
  run() {
    this.label();
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const $ = this.$, L = this.L(), T0 = PX.T0;
    const ids = PX.valWindow(0, L + 1);
    const names = PX.loaded();
    const withSliding = $("length-sliding").checked && L > T0;
    const steps = names.length * (withSliding ? 2 : 1);
    this.result = { L, curves: {}, sliding: {}, errors: {} };
    const bar = PX.progress($("length-busy"));
    let k = 0;
    const draw = () => this.draw(L, T0);
    for (const n of names) {
      bar.set(`${n} L = ${L} (${k + 1}/${steps})`, k++ / steps);
      try {
        const r = await PX.evalWindow(n, ids);
        if (stale()) return bar.done();
        this.result.curves[n] = r;
      } catch (e) {
        this.result.errors[n] = e.message;
      }
      draw();
    }
    if (withSliding) {
      for (const n of names) {
        if (!this.result.curves[n]) { k++; continue; }
        bar.set(`${n} ${PX.bi("滑动窗口", "sliding window")} (${k + 1}/${steps})`, k++ / steps);
        const key = JSON.stringify(["sliding", n, L]);
        if (!PX.cache.has(key)) PX.cache.set(key, await PX.call("sliding", { name: n, ids, window: T0 }));
        if (stale()) return bar.done();
        this.result.sliding[n] = PX.cache.get(key);
        draw();
      }
    }
    const ms = names.map((n) => this.result.curves[n]?.ms || 0);
    bar.done(PX.bi(`每个模型读 ${L} 个字符用时 ${Math.round(Math.min(...ms))}–${Math.round(Math.max(...ms))} 毫秒。`,
      `each model read ${L} characters in ${Math.round(Math.min(...ms))}–${Math.round(Math.max(...ms))} ms.`));
  },

  draw(L, T0) {
    const $ = this.$, w = Math.max(1, Math.round(L / 40)), series = [];
    for (const [n, r] of Object.entries(this.result.curves))
      series.push({ points: PX.buckets(r.losses, w), color: PX.scheme(n).color, label: n });
    for (const [n, v] of Object.entries(this.result.sliding))
      series.push({ points: PX.buckets(v, w), color: PX.scheme(n).color, dashed: true, width: 1.5, label: n + " sliding T0" });
    PX.chart($("length-chart"), {
      series,
      x: { min: 0, max: L, label: PX.lang() === "zh" ? "位置（字符）" : "position (characters)" },
      y: { min: 0, label: PX.lang() === "zh" ? `损失（奈特，每 ${w} 个位置平均）` : `loss (nats, mean of ${w} positions)` },
      vlines: [{ x: T0, label: "T0", color: "#444" }],
    });
    const mean = (v, a, b) => { let s = 0; for (let i = a; i < b; ++i) s += v[i]; return b > a ? s / (b - a) : NaN; };
    const f = (x) => (Number.isFinite(x) ? x.toFixed(3) : "–");
    const rows = PX.loaded().map((n) => {
      const r = this.result.curves[n], sl = this.result.sliding[n];
      if (!r) return `<tr><td style="color:${PX.scheme(n).color}">${n}</td><td colspan="3" class="error">${PX.esc(this.result.errors[n] || "")}</td></tr>`;
      return `<tr data-scheme="${n}" data-mean="${r.mean}"><td style="color:${PX.scheme(n).color}">${PX.label(n)}</td><td>${f(r.mean)}</td>` +
        `<td>${f(mean(r.losses, Math.min(T0, L), L))}</td><td>${sl ? f(mean(sl, 0, L)) : "–"}</td></tr>`;
    });
    $("length-table").innerHTML = `<table class="note"><tr><th></th><th>${PX.bi("平均损失", "mean loss")}</th>` +
      `<th>${PX.bi("T0 之后", "past T0")}</th><th>${PX.bi("滑动窗口", "sliding T0")}</th></tr>${rows.join("")}</table>`;
  },
};
