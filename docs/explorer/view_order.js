// view_order.js — view 6, the guide's section 1: the same characters in two orders through two
// untrained models built by poslab (px_random: GPT with a seed), one without a positional
// encoding, one with RoPE. Each character's output logits (px_logits) are drawn as a row of
// cells; B's rows are put in A's order, character by character, and their largest difference
// printed. Without a position and without the causal mask it is 0: the model is permutation-
// equivariant. With RoPE, or with the mask, it is not.
"use strict";
PX.views.order = {
  auto: true,
  V: 12,
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    for (const id of ["order-a", "order-b", "order-causal", "order-seed"]) $(id).onchange = () => this.run();
  },
  run() {
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const $ = this.$;
    const a = Array.from($("order-a").value), b = Array.from($("order-b").value);
    const sorted = (x) => x.slice().sort().join("");
    if (!a.length || a.length > 32 || sorted(a) !== sorted(b)) {
      $("order-msg").innerHTML = `<div class="error">${PX.bi("B 必须是 A 的同一组字符换个顺序（1 到 32 个字符）。", "B must be A's characters in another order (1 to 32 characters).")}</div>`;
      $("order-panels").innerHTML = "";
      return;
    }
    $("order-msg").innerHTML = "";
    const chars = [...new Set(a)], V = Math.max(this.V, chars.length);
    const id = (c) => chars.indexOf(c);
    const causal = $("order-causal").checked, seed = +$("order-seed").value || 0;
    const out = {};
    for (const pe of ["none", "rope"]) {
      const name = "order-" + pe;
      await PX.call("random", { name, pe, causal, vocab: V, layers: 2, heads: 4, d: 64, ctx: 64, seed });
      out[pe] = {
        a: await PX.call("logits", { name, ids: a.map(id), vocab: V }),
        b: await PX.call("logits", { name, ids: b.map(id), vocab: V }),
      };
      if (stale()) return;
    }
    // B's position of each of A's characters (the k-th occurrence of c in A -> the k-th in B)
    const perm = a.map((c, i) => {
      const k = a.slice(0, i).filter((x) => x === c).length;
      return b.map((x, j) => (x === c ? j : -1)).filter((j) => j >= 0)[k];
    });
    // |A - B| per character and logit, B's rows in A's order
    const delta = (pe) => a.map((_, i) => Array.from({ length: V },
      (_, v) => Math.abs(out[pe].a[i * V + v] - out[pe].b[perm[i] * V + v])));
    this.result = {};
    for (const pe of ["none", "rope"]) this.result[pe] = Math.max(...delta(pe).flat());
    const dmax = Math.max(this.result.none, this.result.rope);
    $("order-panels").innerHTML = ["none", "rope"].map((pe) => {
      const { a: la, b: lb } = out[pe], diff = this.result[pe];
      let mx = 0;
      for (const x of [...la, ...lb]) mx = Math.max(mx, Math.abs(x));
      const cell = (x) => {
        const t = Math.min(1, Math.abs(x) / (mx || 1));
        return `<span class="cell" style="background:${x >= 0 ? `rgba(0,114,178,${t})` : `rgba(213,94,0,${t})`}" title="${x.toFixed(4)}"></span>`;
      };
      const rows = (text, lg, order) => order.map((i) =>
        `<span>${PX.esc(text[i])}</span>${Array.from({ length: V }, (_, v) => cell(lg[i * V + v])).join("")}`).join("");
      // |A - B| on one scale for both panels: the larger model's largest difference is black
      const dcell = (x) => `<span class="cell" style="background:rgba(32,33,36,${(x / (dmax || 1)).toFixed(3)})" title="${x.toExponential(2)}"></span>`;
      const drows = delta(pe).map((row, i) => `<span>${PX.esc(a[i])}</span>` + row.map(dcell).join("")).join("");
      const title = pe === "none" ? PX.bi("无位置编码", "no position (NoPE)") : "RoPE";
      const same = diff < 1e-6;
      return `<div class="panel" data-scheme="${pe}" data-diff="${diff}"><h3><span style="color:${PX.scheme(pe).color}">${title}</span></h3>
        <div class="note">A = ${PX.esc(a.join(""))}</div>
        <div class="cells" style="grid-template-columns: 2em repeat(${V}, 1fr)">${rows(a, la, a.map((_, i) => i))}</div>
        <div class="note">${PX.bi("B 的输出，按 A 的字排好", "B's outputs, put in A's order")} (B = ${PX.esc(b.join(""))})</div>
        <div class="cells" style="grid-template-columns: 2em repeat(${V}, 1fr)">${rows(b, lb, perm)}</div>
        <div class="note">|A − B| ${PX.bi("（两个面板同一标尺：最大差 = 黑）", "(one scale in both panels: the largest difference is black)")}</div>
        <div class="cells" style="grid-template-columns: 2em repeat(${V}, 1fr)">${drows}</div>
        <div class="verdict">${PX.bi("同一个字的输出最大差", "largest difference for the same character")}: <b>${diff.toExponential(2)}</b>（${PX.bi("logit 最大", "largest logit")} ${mx.toExponential(2)}）— ${same ? PX.bi("一样（只差浮点舍入）：模型看不到顺序", "the same (up to float rounding): the model cannot see the order") : PX.bi("不一样：模型看得到顺序", "different: the model sees the order")}</div></div>`;
    }).join("");
  },
};
