/** The PromQL subset the alert rules test evaluates with (test/promql.ts), on hand-written scrapes. */
import { describe, expect, it } from 'vitest';
import { parseText } from './prom-text.js';
import { evaluate } from './promql.js';

const before = parseText(
  ['c_total{queue="a",name="x"} 10', 'c_total{queue="a",name="y"} 5', 'c_total{queue="b",name="x"} 100', 'g{queue="a"} 1'].join('\n'),
);
const after = parseText(
  [
    'c_total{queue="a",name="x"} 16',
    'c_total{queue="a",name="y"} 5',
    'c_total{queue="b",name="x"} 3',
    'c_total{queue="c",name="x"} 9',
    'g{queue="a"} 4',
    'g{queue="b"} 0',
  ].join('\n'),
);
const at = (expr: string) => evaluate(expr, { before, after, time: 1_000 });

describe('promql subset', () => {
  it('increase and rate per series: a reset counts its new value, a series absent before gives nothing', () => {
    expect(at('increase(c_total[1m])')).toEqual([
      { labels: { queue: 'a', name: 'x' }, value: 6 },
      { labels: { queue: 'a', name: 'y' }, value: 0 },
      { labels: { queue: 'b', name: 'x' }, value: 3 },
    ]);
    expect(at('sum by (queue) (rate(c_total[1m]))')).toEqual([
      { labels: { queue: 'a' }, value: 0.1 },
      { labels: { queue: 'b' }, value: 0.05 },
    ]);
  });

  it('matchers, aggregation, arithmetic and comparisons as filters', () => {
    expect(at('sum by (queue) (c_total{name=~"x|z", queue!="c"}) > 10')).toEqual([{ labels: { queue: 'a' }, value: 16 }]);
    expect(at('g / (g > 0) > 0.5')).toEqual([{ labels: { queue: 'a' }, value: 1 }]);
    expect(at('max by (queue) (g) * 2 - 1')).toEqual([
      { labels: { queue: 'a' }, value: 7 },
      { labels: { queue: 'b' }, value: -1 },
    ]);
    expect(at('time() - g > 999')).toEqual([{ labels: { queue: 'b' }, value: 1000 }]);
    expect(at('sum(c_total)')).toEqual([{ labels: {}, value: 33 }]);
  });

  it('refuses what it does not support', () => {
    expect(() => at('histogram_quantile(0.9, g)')).toThrow();
    expect(() => at('1 > 0')).toThrow(/bool/);
  });
});
