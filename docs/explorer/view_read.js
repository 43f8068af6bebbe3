// view_read.js — view 1: one window read by every model at once. Each model's per-character
// losses (px_eval: poslab eval's evaluate on this window) colour the text in its own panel,
// side by side, with the mean; hovering a character lists all six losses for it.
"use strict";
PX.views.read = {
  auto: true,
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    const controls = $("read-source").closest(".controls");
    $("read-source").onchange = () => {
      controls.classList.toggle("typed", $("read-source").value === "typed");
      this.run();
    };
    $("read-start").max = PX.val.length - 1100;
    $("read-random").onclick = () => {
      const L = +$("read-len").value;
      $("read-start").value = Math.floor(Math.random() * (PX.val.length - L - 1));
      this.run();
    };
    for (const id of ["read-start", "read-len"]) $(id).onchange = () => this.run();
    $("read-run").onclick = () => this.run();
    $("read-scale").innerHTML = PX.scaleBar();
    $("read-panels").onmouseover = (e) => this.hover(e);
  },

  // The window: val tokens [start, start + L] (L + 1 characters: L predicted), or the typed text.
  window() {
    const $ = this.$;
    if ($("read-source").value === "typed") {
      const w = PX.encode($("read-text").value), max = 4097;  // 4096 predicted, as the val windows
      return w.ids.length <= max ? w : { ...w, ids: w.ids.slice(0, max), chars: w.chars.slice(0, max), cut: max };
    }
    const L = +$("read-len").value;
    const start = Math.max(0, Math.min(+$("read-start").value || 0, PX.val.length - L - 1));
    const ids = PX.valWindow(start, L + 1);
    return { ids, chars: ids.map((i) => PX.vocab[i]), unknown: [] };
  },

  run() {
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const $ = this.$;
    const w = this.window();
    $("read-msg").innerHTML = PX.unknownNote(w.unknown) + (w.cut ? `<div class="note">${PX.bi(
      `只读前 ${w.cut} 个字符。`, `Only the first ${w.cut} characters are read.`)}</div>` : "");
    if (w.ids.length < 2) {
      $("read-msg").innerHTML = `<div class="error">${PX.bi("请至少输入两个字符：第一个字符之后的每个字符都会被预测。", "Type at least two characters: every character after the first is predicted.")}</div>`;
      $("read-panels").innerHTML = "";
      return;
    }
    const names = PX.loaded();
    this.result = { chars: w.chars, losses: {}, unknown: new Set(w.unknown.map((u) => u.i)) };
    $("read-panels").innerHTML = names.map((n) =>
      `<div class="panel" data-scheme="${n}"><h3><span style="color:${PX.scheme(n).color}">${PX.label(n)}</span><span class="num"></span></h3><div class="text"></div></div>`).join("");
    const bar = PX.progress($("read-busy"));
    for (let k = 0; k < names.length; ++k) {
      const n = names[k];
      bar.set(`${n} ${k + 1}/${names.length}`, k / names.length);
      const panel = $("read-panels").querySelector(`[data-scheme="${n}"]`);
      try {
        const r = await PX.evalWindow(n, w.ids);
        if (stale()) return bar.done();
        this.result.losses[n] = r.losses;
        panel.dataset.mean = r.mean;
        panel.querySelector(".num").innerHTML = `${PX.bi("平均", "mean")} ${r.mean.toFixed(4)}`;
        PX.renderText(panel.querySelector(".text"), w.chars, (i) => {
          if (i === 0) return "color:#9aa0a6";
          const l = r.losses[i - 1];
          return `background:${PX.lossColor(l)};color:${PX.lossText(l)}`;
        }, this.result.unknown);
      } catch (e) {
        panel.querySelector(".text").innerHTML = `<div class="error">${PX.esc(e.message)}</div>`;
      }
    }
    bar.done(PX.bi(`${w.ids.length - 1} 个字符被预测；第一个字符（灰色）只作为上下文。`,
      `${w.ids.length - 1} characters predicted; the first (grey) is context only.`));
  },

  // Every model's loss for the hovered character.
  hover(e) {
    const span = e.target.closest("span.c");
    if (!span || !this.result) return;
    const i = +span.dataset.i;
    const c = this.result.chars[i];
    const shown = c === "\n" ? "↵" : c === " " ? "␣" : c;
    const parts = PX.loaded().filter((n) => this.result.losses[n]).map((n) => i === 0 ? "" :
      `<span style="color:${PX.scheme(n).color}">${n}</span> ${this.result.losses[n][i - 1].toFixed(2)}`);
    this.$("read-hover").innerHTML = `${PX.bi("位置", "position")} ${i} “${PX.esc(shown)}”: ` +
      (i === 0 ? PX.bi("第一个字符不被预测", "the first character is not predicted") : parts.join(" · ") + " " + PX.bi("奈特", "nats"));
  },
};
