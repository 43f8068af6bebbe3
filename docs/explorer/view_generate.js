// view_generate.js — view 7: each model continues the same prompt one character at a time
// (px_gen_start feeds the prompt into a KV cache, px_gen_next draws the next character as
// poslab generate does, with the same seed and temperature), the text growing as it comes.
"use strict";
PX.views.generate = {
  auto: false,
  init() {
    const $ = (id) => document.getElementById(id);
    this.$ = $;
    this.latest = PX.latest();
    $("gen-run").onclick = () => this.run();
  },
  run() {
    this.pending = this.latest((stale) => this.compute(stale));
    return this.pending;
  },

  async compute(stale) {
    const $ = this.$;
    const w = PX.encode($("gen-prompt").value);
    const tokens = Math.max(1, Math.min(2000, +$("gen-tokens").value || 200));
    const temperature = Math.max(0, +$("gen-temp").value || 0), seed = +$("gen-seed").value || 0;
    $("gen-msg").innerHTML = PX.unknownNote(w.unknown);
    if (!w.ids.length) {
      $("gen-msg").innerHTML = `<div class="error">${PX.bi("请输入开头。", "Type a prompt.")}</div>`;
      return;
    }
    const names = PX.loaded();
    const prompt = PX.esc(PX.decode(w.ids));
    $("gen-panels").innerHTML = names.map((n) =>
      `<div class="panel" data-scheme="${n}"><h3><span style="color:${PX.scheme(n).color}">${PX.label(n)}</span></h3><div class="gen"><span class="prompt">${prompt}</span><span class="new"></span></div></div>`).join("");
    this.result = {};
    const bar = PX.progress($("gen-busy"));
    for (let k = 0; k < names.length; ++k) {
      const n = names[k], el = $("gen-panels").querySelector(`[data-scheme="${n}"] .new`);
      bar.set(`${n} ${k + 1}/${names.length}`, k / names.length);
      try {
        const ids = await PX.call("generate", { name: n, ids: w.ids, tokens, temperature, seed },
          (part) => { if (!stale()) el.textContent = PX.decode(part); });
        el.textContent = PX.decode(ids);
        this.result[n] = PX.decode(ids);
      } catch (e) {
        el.innerHTML = `<div class="error">${PX.esc(e.message)}</div>`;
      }
      if (stale()) return bar.done();
    }
    bar.done();
  },
};
