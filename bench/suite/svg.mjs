// A small SVG writer for the report's charts: a line chart (throughput against size, log-log) and
// a scatter chart (compression factor against speed). Pure functions: data in, SVG text out.

const W = 760;
const H = 440;
const M = { left: 72, right: 220, top: 40, bottom: 56 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];

/** Escapes text for SVG/XML. */
export function escapeXml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

const fmtTick = (v) => {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 2 ** 30).toPrecision(3)}G`;
  if (a >= 1e3 && Number.isInteger(Math.log2(a))) {
    if (a >= 2 ** 30) return `${v / 2 ** 30} Gi`;
    if (a >= 2 ** 20) return `${v / 2 ** 20} Mi`;
    if (a >= 2 ** 10) return `${v / 2 ** 10} Ki`;
  }
  if (a >= 100) return v.toFixed(0);
  if (a >= 1) return `${+v.toPrecision(3)}`;
  return `${+v.toPrecision(2)}`;
};

/** An axis: maps values to pixels, linear or log, with ticks at powers of `base`. */
function axis(values, from, to, log, base) {
  const finite = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let lo = finite.length ? Math.min(...finite) : 1;
  let hi = finite.length ? Math.max(...finite) : 10;
  if (log) {
    const b = Math.log(base);
    lo = Math.floor(Math.log(lo) / b + 1e-9);
    hi = Math.ceil(Math.log(hi) / b - 1e-9);
    if (hi === lo) hi = lo + 1;
    const map = (v) => from + ((Math.log(v) / b - lo) / (hi - lo)) * (to - from);
    const ticks = [];
    const stepE = Math.max(1, Math.ceil((hi - lo) / 10));
    for (let e = lo; e <= hi; e += stepE) ticks.push(base ** e);
    return { map, ticks };
  }
  if (lo > 0) lo = 0;
  if (hi === lo) hi = lo + 1;
  const span = hi - lo;
  const step = 10 ** Math.floor(Math.log10(span / 5));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => span / s <= 8) ?? step * 10;
  hi = Math.ceil(hi / nice) * nice;
  const map = (v) => from + ((v - lo) / (hi - lo)) * (to - from);
  const ticks = [];
  for (let v = lo; v <= hi + 1e-12; v += nice) ticks.push(+v.toPrecision(12));
  return { map, ticks };
}

function frame(title, xLabel, yLabel, xa, ya) {
  const x0 = M.left;
  const x1 = W - M.right;
  const y0 = H - M.bottom;
  const y1 = M.top;
  const parts = [];
  parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(`<text x="${W / 2 - M.right / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  for (const t of xa.ticks) {
    const x = xa.map(t).toFixed(1);
    parts.push(`<line x1="${x}" y1="${y0}" x2="${x}" y2="${y1}" stroke="#e4e4e4"/>`);
    parts.push(`<text x="${x}" y="${y0 + 16}" text-anchor="middle" font-size="11">${escapeXml(fmtTick(t))}</text>`);
  }
  for (const t of ya.ticks) {
    const y = ya.map(t).toFixed(1);
    parts.push(`<line x1="${x0}" y1="${y}" x2="${x1}" y2="${y}" stroke="#e4e4e4"/>`);
    parts.push(`<text x="${x0 - 6}" y="${(+y + 4).toFixed(1)}" text-anchor="end" font-size="11">${escapeXml(fmtTick(t))}</text>`);
  }
  parts.push(`<rect x="${x0}" y="${y1}" width="${x1 - x0}" height="${y0 - y1}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${(x0 + x1) / 2}" y="${H - 14}" text-anchor="middle" font-size="12">${escapeXml(xLabel)}</text>`);
  parts.push(
    `<text x="16" y="${(y0 + y1) / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 16 ${(y0 + y1) / 2})">${escapeXml(yLabel)}</text>`,
  );
  return parts;
}

function legend(names) {
  const parts = [];
  const x = W - M.right + 14;
  names.forEach((name, i) => {
    const y = M.top + 10 + i * 18;
    parts.push(`<rect x="${x}" y="${y - 8}" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/>`);
    parts.push(`<text x="${x + 18}" y="${y + 2}" font-size="11">${escapeXml(name)}</text>`);
  });
  return parts;
}

const wrap = (parts) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">\n${parts.join('\n')}\n</svg>\n`;

/**
 * A line chart. series: [{ name, points: [[x, y], ...] }] (points with a null or non-positive y on
 * a log axis are left out). Log axes use powers of xBase / 10.
 */
export function lineChart({ title, xLabel, yLabel, series, xLog = true, yLog = true, xBase = 4 }) {
  const clean = series.map((s) => ({ ...s, points: s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!yLog || y > 0)) }));
  const xa = axis(clean.flatMap((s) => s.points.map((p) => p[0])), M.left, W - M.right, xLog, xBase);
  const ya = axis(clean.flatMap((s) => s.points.map((p) => p[1])), H - M.bottom, M.top, yLog, 10);
  const parts = frame(title, xLabel, yLabel, xa, ya);
  clean.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.map(([x, y]) => `${xa.map(x).toFixed(1)},${ya.map(y).toFixed(1)}`);
    if (pts.length > 1) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`);
    for (const p of pts) {
      const [cx, cy] = p.split(',');
      parts.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${color}"/>`);
    }
  });
  parts.push(...legend(clean.map((s) => s.name)));
  return wrap(parts);
}

/** A scatter chart: series [{ name, points: [{ x, y, label }] }], log-log by default. */
export function scatterChart({ title, xLabel, yLabel, series, xLog = true, yLog = true }) {
  const ok = (v, log) => Number.isFinite(v) && (!log || v > 0);
  const clean = series.map((s) => ({ ...s, points: s.points.filter((p) => ok(p.x, xLog) && ok(p.y, yLog)) }));
  const xa = axis(clean.flatMap((s) => s.points.map((p) => p.x)), M.left, W - M.right, xLog, 10);
  const ya = axis(clean.flatMap((s) => s.points.map((p) => p.y)), H - M.bottom, M.top, yLog, 10);
  const parts = frame(title, xLabel, yLabel, xa, ya);
  clean.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    for (const p of s.points) {
      const cx = xa.map(p.x).toFixed(1);
      const cy = ya.map(p.y).toFixed(1);
      parts.push(`<circle cx="${cx}" cy="${cy}" r="4.5" fill="${color}" fill-opacity="0.85"><title>${escapeXml(`${s.name}: ${p.label ?? ''}`)}</title></circle>`);
      if (p.label) parts.push(`<text x="${(+cx + 6).toFixed(1)}" y="${(+cy - 5).toFixed(1)}" font-size="9" fill="#444">${escapeXml(p.label)}</text>`);
    }
  });
  parts.push(...legend(clean.map((s) => s.name)));
  return wrap(parts);
}
