/** A small reader of the Prometheus text format (what the tests scrape). */

/** One sample: its metric name, labels and value. */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the samples of a text exposition (comments skipped). */
export function parseText(text: string): ParsedSample[] {
  const out: ParsedSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    out.push({ name: m[1], labels, value });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `match`. */
export function sum(samples: ParsedSample[], name: string, match: Record<string, string>): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}
