// view_inspect.js — view 4: hover or tap a character. px_inspect runs the window through each
// model once (its logits as probabilities, top 5 per position, and every layer's attention
// weights, GPT::attention_maps: what poslab attend draws); px_attention_row then hands back
// where the hovered character's query looks, per layer and head. The chosen head is drawn on
// the text, all heads as strips below it (click one to draw it).
"use strict";
PX.views.inspect = {
  auto: true,
  K: 5,
  MAX: 512,
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    this.scheme = PX.loaded().includes("rope") ? "rope" : PX.loaded()[0];
    this.head = { layer: 0, head: 0 };
    const controls = $("inspect-source").closest(".controls");
    $("inspect-source").onchange = () => {
      controls.classList.toggle("typed", $("inspect-source").value === "typed");
      this.run();
    };
    for (const id of ["inspect-start", "inspect-len"]) $(id).onchange = () => this.run();
    $("inspect-run").onclick = () => this.run();
    $("inspect-schemes").innerHTML = PX.loaded().map((n) =>
      `<button data-scheme="${n}" style="border-color:${PX.scheme(n).color}">${n}</button>`).join("");
    $("inspect-schemes").onclick = (e) => {
      const b = e.target.closest("button");
      if (!b) return;
      this.scheme = b.dataset.scheme;
      this.markScheme();
      if (this.at !== undefined) this.show(this.at);
    };
    this.markScheme();
    const text = $("inspect-text-out");
    text.onmouseover = (e) => this.pick(e);
    text.onclick = (e) => this.pick(e);
    $("inspect-heads").onclick = (e) => {
      const c = e.target.closest("canvas");
      if (!c) return;
      this.head = { layer: +c.dataset.layer, head: +c.dataset.head };
      if (this.at !== undefined) this.show(this.at);
    };
  },
  markScheme() {
    for (const b of this.$("inspect-schemes").querySelectorAll("button")) {
      const on = b.dataset.scheme === this.scheme;
      b.classList.toggle("on", on);
      b.style.background = on ? PX.scheme(b.dataset.scheme).color : "#fff";
    }
  },
  window() {
    const $ = this.$;
    if ($("inspect-source").value === "typed") {
      const w = PX.encode($("inspect-text").value);
      return { ids: w.ids.slice(0, this.MAX), chars: w.chars.slice(0, this.MAX), unknown: w.unknown, cut: w.ids.length > this.MAX };
    }
    const L = +$("inspect-len").value;
    const start = Math.max(0, Math.min(+$("inspect-start").value || 0, PX.val.length - L));
    const ids = PX.valWindow(start, L);
    return { ids, chars: ids.map((i) => PX.vocab[i]), unknown: [] };
  },
  run() {
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const $ = this.$, w = this.window();
    this.win = null;
    $("inspect-msg").innerHTML = PX.unknownNote(w.unknown) + (w.cut ? PX.bi(`只看前 ${this.MAX} 个字符。`, ` Only the first ${this.MAX} characters are read.`) : "");
    if (w.ids.length < 1) {
      $("inspect-msg").innerHTML = `<div class="error">${PX.bi("请输入一些文字。", "Type some text.")}</div>`;
      return;
    }
    const names = PX.loaded(), preds = {}, errors = {};
    const bar = PX.progress($("inspect-busy"));
    for (let k = 0; k < names.length; ++k) {
      bar.set(`${names[k]} ${k + 1}/${names.length}`, k / names.length);
      try {
        preds[names[k]] = await PX.call("inspect", { name: names[k], ids: w.ids, k: this.K });
      } catch (e) {
        errors[names[k]] = e.message;
      }
      if (stale()) return bar.done();
    }
    bar.done();
    this.win = { ...w, preds, errors };
    PX.renderText($("inspect-text-out"), w.chars, () => "", new Set(w.unknown.map((u) => u.i)));
    const paren = w.chars.indexOf("(", Math.floor(w.chars.length / 2));
    await this.show(paren >= 0 ? paren : w.ids.length - 1);
  },

  pick(e) {
    const span = e.target.closest("span.c");
    if (span && this.win) this.show(+span.dataset.i);
  },

  // Position i: each model's top 5 for the next character, and the chosen model's heads.
  async show(i) {
    this.at = i;
    if (this.fetching) return;  // one row at a time; the last position asked wins
    this.fetching = true;
    try {
      let row, shownAt;
      do {
        shownAt = this.at;
        const info = PX.info[this.scheme];
        row = this.win.preds[this.scheme] ? await PX.call("row", {
          name: this.scheme, i: shownAt, layers: info.n_layer, heads: info.n_head, n: this.win.ids.length,
        }) : null;
      } while (shownAt !== this.at);
      this.drawPreds(shownAt);
      this.drawHeads(shownAt, row);
    } finally {
      this.fetching = false;
    }
  },

  drawPreds(i) {
    const $ = this.$, w = this.win;
    const next = i + 1 < w.chars.length ? w.chars[i + 1] : null;
    const vis = (c) => (c === "\n" ? "↵" : c === " " ? "␣" : c === "\t" ? "→" : PX.esc(c));
    $("inspect-at").innerHTML = `${PX.bi("位置", "position")} ${i} “${vis(w.chars[i])}” → ${PX.bi("下一个", "next")}: ` +
      (next === null ? PX.bi("（窗口结束）", "(end of window)") : `“${vis(next)}”`);
    $("inspect-preds").innerHTML = PX.loaded().map((n) => {
      const p = w.preds[n];
      if (!p) return `<div class="pred"><b style="color:${PX.scheme(n).color}">${n}</b><div class="error">${PX.esc(w.errors[n] || "")}</div></div>`;
      const rows = [];
      for (let j = 0; j < this.K; ++j) {
        const id = p.ids[i * this.K + j], prob = p.p[i * this.K + j];
        const c = PX.vocab[id], hit = c === next ? "hit" : "";
        rows.push(`<div class="row"><span class="${hit}" style="width:1.6em">${vis(c)}</span>` +
          `<span class="bar" style="width:${(prob * 100).toFixed(0)}px;background:${PX.scheme(n).color}"></span>${(prob * 100).toFixed(1)}%</div>`);
      }
      return `<div class="pred"><b style="color:${PX.scheme(n).color}">${PX.label(n)}</b>${rows.join("")}</div>`;
    }).join("");
  },

  drawHeads(i, row) {
    const $ = this.$, n = this.win.ids.length, info = PX.info[this.scheme];
    const spans = $("inspect-text-out").querySelectorAll("span.c");
    spans.forEach((s) => s.classList.toggle("sel", +s.dataset.i === i));
    if (!row) {
      $("inspect-heads").innerHTML = `<div class="error">${PX.esc(this.win.errors[this.scheme] || "")}</div>`;
      return;
    }
    const [r, g, b] = PX.scheme(this.scheme).color.match(/\w\w/g).map((h) => parseInt(h, 16));
    const { layer, head } = this.head;
    const at = (l, h, j) => row[(l * info.n_head + h) * n + j];
    let mx = 0;
    for (let j = 0; j <= i; ++j) mx = Math.max(mx, at(layer, head, j));
    spans.forEach((s) => {
      const j = +s.dataset.i, a = j <= i && mx > 0 ? at(layer, head, j) / mx : 0;
      s.style.background = a > 0.02 ? `rgba(${r},${g},${b},${(0.85 * a).toFixed(2)})` : "";
      s.style.color = a > 0.6 ? "#fff" : "";
    });
    $("inspect-heads-label").innerHTML = PX.bi(
      `${this.scheme}：第 ${layer} 层第 ${head} 头画在文字上（越深权重越大）。下面每条是一个头对位置 0..${i} 的权重，点一条换成它。`,
      `${this.scheme}: layer ${layer}, head ${head} drawn on the text (darker = more weight). Each strip below is one head's weights over positions 0..${i}; click one to draw it.`);
    const H = info.n_head, cells = [];
    $("inspect-heads").style.gridTemplateColumns = `auto repeat(${H}, 1fr)`;
    cells.push("<span></span>");
    for (let h = 0; h < H; ++h) cells.push(`<span class="lab">${PX.bi("头", "head")} ${h}</span>`);
    for (let l = 0; l < info.n_layer; ++l) {
      cells.push(`<span class="lab">${PX.bi("层", "layer")} ${l}</span>`);
      for (let h = 0; h < H; ++h) cells.push(`<canvas data-layer="${l}" data-head="${h}" width="${i + 1}" height="1" class="${l === layer && h === head ? "on" : ""}"></canvas>`);
    }
    $("inspect-heads").innerHTML = cells.join("");
    for (const c of $("inspect-heads").querySelectorAll("canvas")) {
      const l = +c.dataset.layer, h = +c.dataset.head, ctx = c.getContext("2d");
      const img = ctx.createImageData(i + 1, 1);
      let m = 0;
      for (let j = 0; j <= i; ++j) m = Math.max(m, at(l, h, j));
      for (let j = 0; j <= i; ++j) {
        const a = m > 0 ? at(l, h, j) / m : 0;
        img.data.set([r, g, b, Math.round(255 * a)], 4 * j);
      }
      ctx.putImageData(img, 0, 0);
    }
  },
};
