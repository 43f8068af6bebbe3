// chart.js — one small SVG line chart, the only drawing helper the views share.
//   PX.chart(el, {
//     series: [{ points: [{x, y}], color, dashed, width, label }],
//     x: { min, max, log, label }, y: { min, max, log, label },
//     vlines: [{ x, label, color }], hlines: [{ y, label, color }],
//   })
// Axes with a few round ticks, lines as polylines; a log axis takes base-10 ticks.
"use strict";
PX.chart = (el, spec) => {
  const W = 600, H = 330, m = { l: 58, r: 14, t: 14, b: 46 };
  const ax = (a, pts) => {
    const vals = pts.filter((v) => Number.isFinite(v) && (!a.log || v > 0));
    let lo = a.min ?? Math.min(...vals), hi = a.max ?? Math.max(...vals);
    if (!(hi > lo)) hi = lo + 1;
    const f = a.log ? Math.log10 : (v) => v;
    return { lo, hi, f, log: !!a.log, label: a.label || "" };
  };
  const allX = [], allY = [];
  for (const s of spec.series) for (const p of s.points) allX.push(p.x), allY.push(p.y);
  for (const v of spec.vlines || []) allX.push(v.x);
  const X = ax(spec.x || {}, allX), Y = ax(spec.y || {}, allY);
  const sx = (v) => m.l + ((X.f(v) - X.f(X.lo)) / (X.f(X.hi) - X.f(X.lo))) * (W - m.l - m.r);
  const sy = (v) => H - m.b - ((Y.f(Math.min(Math.max(v, Y.lo), Y.hi)) - Y.f(Y.lo)) / (Y.f(Y.hi) - Y.f(Y.lo))) * (H - m.t - m.b);
  const out = [];
  const ticks = (A) => {
    if (A.log) {
      const t = [];
      for (let e = Math.ceil(Math.log10(A.lo)); e <= Math.floor(Math.log10(A.hi)); ++e) t.push(10 ** e);
      return t;
    }
    const raw = (A.hi - A.lo) / 5, mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((k) => k * mag).find((s) => s >= raw);
    const t = [];
    for (let v = Math.ceil(A.lo / step) * step; v <= A.hi + 1e-9; v += step) t.push(+v.toPrecision(12));
    return t;
  };
  const fmt = (v) => (Math.abs(v) >= 1e4 ? v.toExponential(0).replace("+", "") : String(+v.toPrecision(4)));
  out.push('<g class="grid">');
  for (const t of ticks(X)) out.push(`<line x1="${sx(t)}" x2="${sx(t)}" y1="${m.t}" y2="${H - m.b}"/>`);
  for (const t of ticks(Y)) out.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${sy(t)}" y2="${sy(t)}"/>`);
  out.push('</g><g class="axis">');
  out.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${H - m.b}" y2="${H - m.b}"/><line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${H - m.b}"/>`);
  for (const t of ticks(X)) out.push(`<text x="${sx(t)}" y="${H - m.b + 18}" text-anchor="middle">${fmt(t)}</text>`);
  for (const t of ticks(Y)) out.push(`<text x="${m.l - 6}" y="${sy(t) + 4}" text-anchor="end">${fmt(t)}</text>`);
  out.push(`<text x="${(m.l + W - m.r) / 2}" y="${H - 8}" text-anchor="middle">${X.label}</text>`);
  out.push(`<text transform="translate(15 ${(m.t + H - m.b) / 2}) rotate(-90)" text-anchor="middle">${Y.label}</text></g>`);
  for (const v of spec.vlines || []) {
    if (v.x < X.lo || v.x > X.hi) continue;
    out.push(`<line x1="${sx(v.x)}" x2="${sx(v.x)}" y1="${m.t}" y2="${H - m.b}" stroke="${v.color || "#888"}" stroke-dasharray="4 3"/>`);
    out.push(`<text x="${sx(v.x) + 4}" y="${m.t + 12}" fill="${v.color || "#555"}">${v.label || ""}</text>`);
  }
  for (const h of spec.hlines || []) {
    if (h.y < Y.lo || h.y > Y.hi) continue;
    out.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${sy(h.y)}" y2="${sy(h.y)}" stroke="${h.color || "#888"}" stroke-dasharray="4 3"/>`);
    out.push(`<text x="${W - m.r - 4}" y="${sy(h.y) - 4}" text-anchor="end" fill="${h.color || "#555"}">${h.label || ""}</text>`);
  }
  for (const s of spec.series) {
    const pts = s.points.filter((p) => Number.isFinite(p.y) && p.x >= X.lo && p.x <= X.hi && (!Y.log || p.y > 0));
    if (!pts.length) continue;
    const d = pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ");
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="${s.width || 2}" ${s.dashed ? 'stroke-dasharray="6 4"' : ""} points="${d}"><title>${s.label || ""}</title></polyline>`);
  }
  el.innerHTML = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img">${out.join("")}</svg>`;
};
