// Reading Prometheus' text exposition format (what `GET /metrics` answers), for the service's
// load benchmark and its tests.

/**
 * The sum of metric `name`'s samples whose labels include every pair of `labels`, in the text
 * `text` (one sample a line: `name{label="value",...} number`).
 * @param {string} text
 * @param {string} name
 * @param {Record<string, string>} [labels]
 * @returns {number}
 */
export function metricSum(text, name, labels = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = line.match(/^(\w+)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}
