// A small grouped bar chart as inline SVG: milliseconds per op, one bar per path.

const SVG = 'http://www.w3.org/2000/svg';
const COLORS = { cpu: '#2f6db5', gpu: '#d9822b' };

function element(name, attributes, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Draws `rows` ([{ op, cpu: ms | null, gpu: ms | null, auto: 'cpu' | 'gpu' }]) into `svg`:
 * a row per op, a horizontal bar per path, the path `auto` chose marked with a star.
 */
export function drawTimesChart(svg, rows) {
  const labelWidth = 92;
  const barArea = 300;
  const rowHeight = 34;
  const top = 22;
  const width = labelWidth + barArea + 70;
  const height = top + rows.length * rowHeight + 8;
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  const max = Math.max(1e-3, ...rows.flatMap((r) => [r.cpu ?? 0, r.gpu ?? 0]));
  // legend
  let x = labelWidth;
  for (const path of ['cpu', 'gpu']) {
    svg.append(element('rect', { x, y: 4, width: 10, height: 10, fill: COLORS[path] }));
    svg.append(element('text', { x: x + 14, y: 13, 'font-size': 11 }, path.toUpperCase()));
    x += 56;
  }
  svg.append(element('text', { x, y: 13, 'font-size': 11, fill: '#555' }, '★ = the path auto picks'));
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    svg.append(element('text', { x: 0, y: y + 19, 'font-size': 12 }, row.op));
    ['cpu', 'gpu'].forEach((path, k) => {
      const ms = row[path];
      const by = y + 3 + k * 14;
      if (ms === null || ms === undefined) {
        svg.append(element('text', { x: labelWidth, y: by + 10, 'font-size': 10, fill: '#888' }, `${path}: n/a`));
        return;
      }
      const w = Math.max(1, (ms / max) * barArea);
      const bar = element('rect', { x: labelWidth, y: by, width: w, height: 12, fill: COLORS[path] });
      bar.append(element('title', {}, `${row.op} on ${path}: ${ms.toFixed(2)} ms`));
      svg.append(bar);
      const star = row.auto === path ? ' ★' : '';
      svg.append(element('text', { x: labelWidth + w + 4, y: by + 10, 'font-size': 10 }, `${ms.toFixed(1)} ms${star}`));
    });
  });
}
