/**
 * A small PromQL evaluator for the alert rules test: the subset docs/alerts/hopper-rules.yml uses,
 * evaluated over two scrapes of a real deployment (the range of rate() and increase() is the time
 * between them). No maintained PromQL evaluator exists on npm, so this one is kept deliberately
 * small; docs/alerts.md lists the subset:
 * - selectors `name{label="v", label=~"re", label!="v", label!~"re"}` (instant: the second scrape);
 * - `rate(selector[range])` and `increase(selector[range])`: the second scrape minus the first per
 *   series (a counter that went down was reset: its value is the increase), over the range in
 *   seconds for rate(); a series absent from either scrape gives nothing, as in Prometheus;
 * - `sum`, `max`, `min`, `avg` with `by (labels)` before the parenthesis; `time()`;
 * - + - * / between vectors (one-to-one, on identical label sets) and with numbers;
 * - > < >= <= == != as filters (keeping the left side's value), between vectors or with numbers;
 * - parentheses and number literals.
 */
import type { ParsedSample } from './prom-text.js';

/** One element of an instant vector: its labels (the metric name dropped) and value. */
export interface Element {
  labels: Record<string, string>;
  value: number;
}
type Value = { kind: 'scalar'; value: number } | { kind: 'vector'; elements: Element[] };

/** The two scrapes an expression is evaluated over, and the time of the second (seconds). */
export interface Scrapes {
  before: ParsedSample[];
  after: ParsedSample[];
  time: number;
}

type Token = { t: 'num'; v: number } | { t: 'id'; v: string } | { t: 'str'; v: string } | { t: 'op'; v: string } | { t: 'dur'; v: number };

const DURATION = /^(\d+)(ms|s|m|h|d)/;
const UNIT: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = src.slice(i);
    if (c === '[') {
      const m = /^\[(\d+(?:ms|s|m|h|d))\]/.exec(rest);
      if (!m) throw new Error(`bad range at "${rest.slice(0, 10)}"`);
      const d = DURATION.exec(m[1])!;
      out.push({ t: 'dur', v: Number(d[1]) * UNIT[d[2]] });
      i += m[0].length;
      continue;
    }
    const op = /^(==|!=|>=|<=|=~|!~|[-+*/(){},=<>])/.exec(rest);
    if (op) {
      out.push({ t: 'op', v: op[1] });
      i += op[1].length;
      continue;
    }
    const num = /^\d+(\.\d+)?(e[-+]?\d+)?/i.exec(rest);
    if (num) {
      out.push({ t: 'num', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(rest);
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    const str = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
    if (str) {
      out.push({ t: 'str', v: str[1].replace(/\\(.)/g, '$1') });
      i += str[0].length;
      continue;
    }
    throw new Error(`unsupported PromQL at "${rest.slice(0, 20)}"`);
  }
  return out;
}

interface Matcher {
  label: string;
  op: string;
  value: string;
}

const matches = (labels: Record<string, string>, m: Matcher): boolean => {
  const v = labels[m.label] ?? '';
  if (m.op === '=') return v === m.value;
  if (m.op === '!=') return v !== m.value;
  const re = new RegExp(`^(?:${m.value})$`);
  return m.op === '=~' ? re.test(v) : !re.test(v);
};

const key = (labels: Record<string, string>): string =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '>': (a, b) => a > b,
  '<': (a, b) => a < b,
  '>=': (a, b) => a >= b,
  '<=': (a, b) => a <= b,
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};
const ARITH: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
};
const AGGREGATE: Record<string, (values: number[]) => number> = {
  sum: (v) => v.reduce((a, b) => a + b, 0),
  max: (v) => Math.max(...v),
  min: (v) => Math.min(...v),
  avg: (v) => v.reduce((a, b) => a + b, 0) / v.length,
};

/** Evaluates `expr` over two scrapes; returns the resulting vector (a scalar result is refused: rules yield vectors). */
export function evaluate(expr: string, scrapes: Scrapes): Element[] {
  const tokens = tokenize(expr);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (v: string): boolean => peek()?.t === 'op' && peek()!.v === v;
  const expect = (v: string): void => {
    if (!isOp(v)) throw new Error(`expected "${v}" at token ${pos} of: ${expr}`);
    pos++;
  };

  const select = (samples: ParsedSample[], name: string, matchers: Matcher[]): Map<string, Element> => {
    const out = new Map<string, Element>();
    for (const s of samples) {
      if (s.name !== name || !matchers.every((m) => matches(s.labels, m))) continue;
      out.set(key(s.labels), { labels: { ...s.labels }, value: s.value });
    }
    return out;
  };

  const selector = (): { name: string; matchers: Matcher[] } => {
    const name = tokens[pos++];
    if (name?.t !== 'id') throw new Error(`expected a metric name at token ${pos - 1} of: ${expr}`);
    const matchers: Matcher[] = [];
    if (isOp('{')) {
      pos++;
      while (!isOp('}')) {
        const label = tokens[pos++];
        const op = tokens[pos++];
        const value = tokens[pos++];
        if (label?.t !== 'id' || op?.t !== 'op' || value?.t !== 'str') throw new Error(`bad label matcher in: ${expr}`);
        matchers.push({ label: label.v, op: op.v, value: value.v });
        if (isOp(',')) pos++;
      }
      pos++;
    }
    return { name: name.v, matchers };
  };

  const primary = (): Value => {
    const tok = peek();
    if (!tok) throw new Error(`unexpected end of: ${expr}`);
    if (tok.t === 'num') {
      pos++;
      return { kind: 'scalar', value: tok.v };
    }
    if (tok.t === 'op' && tok.v === '(') {
      pos++;
      const v = comparison();
      expect(')');
      return v;
    }
    if (tok.t === 'op' && tok.v === '-') {
      pos++;
      const v = primary();
      if (v.kind === 'scalar') return { kind: 'scalar', value: -v.value };
      return { kind: 'vector', elements: v.elements.map((e) => ({ labels: e.labels, value: -e.value })) };
    }
    if (tok.t !== 'id') throw new Error(`unsupported token at ${pos} of: ${expr}`);
    if (tok.v === 'time' && tokens[pos + 1]?.t === 'op' && tokens[pos + 1].v === '(') {
      pos += 2;
      expect(')');
      return { kind: 'scalar', value: scrapes.time };
    }
    if ((tok.v === 'rate' || tok.v === 'increase') && tokens[pos + 1]?.v === '(') {
      pos += 2;
      const { name, matchers } = selector();
      const range = tokens[pos++];
      if (range?.t !== 'dur') throw new Error(`${tok.v}() needs a range selector in: ${expr}`);
      expect(')');
      const before = select(scrapes.before, name, matchers);
      const after = select(scrapes.after, name, matchers);
      const elements: Element[] = [];
      for (const [k, e] of after) {
        const prev = before.get(k);
        if (!prev) continue; // one sample only: Prometheus computes no rate either
        const increase = e.value >= prev.value ? e.value - prev.value : e.value;
        elements.push({ labels: e.labels, value: tok.v === 'rate' ? increase / range.v : increase });
      }
      return { kind: 'vector', elements };
    }
    if (AGGREGATE[tok.v] && (tokens[pos + 1]?.v === 'by' || tokens[pos + 1]?.v === '(')) {
      pos++;
      let by: string[] = [];
      if (peek()?.t === 'id' && peek()!.v === 'by') {
        pos++;
        expect('(');
        while (!isOp(')')) {
          const l = tokens[pos++];
          if (l?.t !== 'id') throw new Error(`bad by() list in: ${expr}`);
          by.push(l.v);
          if (isOp(',')) pos++;
        }
        pos++;
      }
      expect('(');
      const inner = comparison();
      expect(')');
      if (inner.kind !== 'vector') throw new Error(`${tok.v}() needs a vector in: ${expr}`);
      const groups = new Map<string, { labels: Record<string, string>; values: number[] }>();
      for (const e of inner.elements) {
        const labels = Object.fromEntries(by.filter((l) => e.labels[l] !== undefined).map((l) => [l, e.labels[l]]));
        const g = groups.get(key(labels)) ?? { labels, values: [] };
        g.values.push(e.value);
        groups.set(key(labels), g);
      }
      by = [];
      return { kind: 'vector', elements: [...groups.values()].map((g) => ({ labels: g.labels, value: AGGREGATE[tok.v](g.values) })) };
    }
    const { name, matchers } = selector();
    return { kind: 'vector', elements: [...select(scrapes.after, name, matchers).values()] };
  };

  const binary = (left: Value, op: string, right: Value): Value => {
    const compare = op in COMPARE ? COMPARE[op] : undefined;
    const apply = (a: number, b: number): number | undefined => {
      if (compare) return compare(a, b) ? a : undefined;
      return ARITH[op](a, b);
    };
    if (left.kind === 'scalar' && right.kind === 'scalar') {
      if (compare) throw new Error(`a comparison of two numbers needs "bool", unsupported here: ${expr}`);
      return { kind: 'scalar', value: ARITH[op](left.value, right.value) };
    }
    if (left.kind === 'vector' && right.kind === 'scalar') {
      const elements: Element[] = [];
      for (const e of left.elements) {
        const v = apply(e.value, right.value);
        if (v !== undefined) elements.push({ labels: e.labels, value: v });
      }
      return { kind: 'vector', elements };
    }
    if (left.kind === 'scalar' && right.kind === 'vector') {
      const elements: Element[] = [];
      for (const e of right.elements) {
        // A scalar on the left of a comparison keeps the vector's value (PromQL's rule).
        const v = compare ? (compare(left.value, e.value) ? e.value : undefined) : ARITH[op](left.value, e.value);
        if (v !== undefined) elements.push({ labels: e.labels, value: v });
      }
      return { kind: 'vector', elements };
    }
    const rights = new Map((right as { elements: Element[] }).elements.map((e) => [key(e.labels), e]));
    const elements: Element[] = [];
    for (const e of (left as { elements: Element[] }).elements) {
      const r = rights.get(key(e.labels));
      if (!r) continue;
      const v = apply(e.value, r.value);
      if (v !== undefined) elements.push({ labels: e.labels, value: v });
    }
    return { kind: 'vector', elements };
  };

  const level = (ops: string[], next: () => Value) => (): Value => {
    let left = next();
    while (peek()?.t === 'op' && ops.includes(String(peek()!.v))) {
      const op = (tokens[pos++] as { v: string }).v;
      left = binary(left, op, next());
    }
    return left;
  };
  const multiplicative = level(['*', '/'], primary);
  const additive = level(['+', '-'], multiplicative);
  const comparison = level(['>', '<', '>=', '<=', '==', '!='], additive);

  const result = comparison();
  if (pos !== tokens.length) throw new Error(`unparsed PromQL from token ${pos} of: ${expr}`);
  if (result.kind !== 'vector') throw new Error(`the expression is a number, not a vector: ${expr}`);
  return result.elements;
}
