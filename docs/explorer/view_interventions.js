// view_interventions.js — view 3: the interventions of docs/evaluation.md on a window of L
// characters (the first val window, as poslab eval --len L reads it): attention window W,
// position offset P, log logit scale, and for RoPE the scalings with their factor. Each is a
// px_eval argument, the flag of the same name in poslab eval. Solid: with the intervention;
// dashed: the same model without it.
"use strict";
PX.views.interventions = {
  auto: true,
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    for (const id of ["iv-len", "iv-window", "iv-offset", "iv-log", "iv-scaling", "iv-factor"])
      $(id).onchange = () => this.run();
  },
  // The intervention as px_eval's options (the flags of poslab eval).
  options() {
    const $ = this.$;
    return {
      window: +$("iv-window").value,
      offset: +$("iv-offset").value,
      logScale: $("iv-log").checked,
      scaling: $("iv-scaling").value,
      factor: $("iv-scaling").value === "none" ? 0 : +$("iv-factor").value,
    };
  },
  run() {
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const $ = this.$, L = +$("iv-len").value, T0 = PX.T0, opts = this.options();
    const ids = PX.valWindow(0, L + 1);
    const names = PX.loaded();
    this.result = { L, base: {}, with: {}, notes: {} };
    const bar = PX.progress($("iv-busy"));
    const steps = names.length * 2;
    let k = 0;
    for (const n of names) {
      bar.set(`${n} (${k + 1}/${steps})`, k++ / steps);
      try {
        this.result.base[n] = await PX.evalWindow(n, ids);
      } catch (e) {
        this.result.notes[n] = e.message;
      }
      if (stale()) return bar.done();
      bar.set(`${n} (${k + 1}/${steps})`, k++ / steps);
      if (opts.scaling !== "none" && PX.info[n].pe !== "rope") {
        this.result.notes[n] = PX.lang() === "zh" ? "仅 RoPE" : "RoPE only";
      } else if (this.result.base[n]) {
        try {
          this.result.with[n] = await PX.evalWindow(n, ids, opts);
        } catch (e) {
          this.result.notes[n] = e.message;
        }
      }
      if (stale()) return bar.done();
      this.draw(L, T0);
    }
    bar.done();
  },

  draw(L, T0) {
    const $ = this.$, w = Math.max(1, Math.round(L / 40)), series = [];
    for (const [n, r] of Object.entries(this.result.base))
      series.push({ points: PX.buckets(r.losses, w), color: PX.scheme(n).color, dashed: true, width: 1.2, label: n + " plain" });
    for (const [n, r] of Object.entries(this.result.with))
      series.push({ points: PX.buckets(r.losses, w), color: PX.scheme(n).color, width: 2.2, label: n });
    const o = this.options();
    const vlines = [{ x: T0, label: "T0", color: "#444" }];
    if (o.window) vlines.push({ x: o.window, label: "W", color: "#999" });
    PX.chart($("iv-chart"), {
      series,
      x: { min: 0, max: L, label: PX.lang() === "zh" ? "位置（字符）" : "position (characters)" },
      y: { min: 0, label: PX.lang() === "zh" ? `损失（奈特，每 ${w} 个位置平均）` : `loss (nats, mean of ${w} positions)` },
      vlines,
    });
    const f = (x) => (Number.isFinite(x) ? x.toFixed(4) : "–");
    const rows = PX.loaded().map((n) => {
      const b = this.result.base[n], r = this.result.with[n], note = this.result.notes[n];
      return `<tr data-scheme="${n}" ${r ? `data-mean="${r.mean}"` : ""}><td style="color:${PX.scheme(n).color}">${PX.label(n)}</td>` +
        `<td>${b ? f(b.mean) : "–"}</td><td>${r ? f(r.mean) : "–"}</td>` +
        `<td>${note ? `<span class="error">${PX.esc(note)}</span>` : ""}</td></tr>`;
    });
    $("iv-table").innerHTML = `<table class="note"><tr><th></th><th>${PX.bi("不干预", "plain")}</th>` +
      `<th>${PX.bi("干预后", "with it")}</th><th></th></tr>${rows.join("")}</table>`;
  },
};
