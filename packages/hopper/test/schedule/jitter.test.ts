/** jitterFor: deterministic from (scheduler id, instant), in [0, jitter), never past the next occurrence. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { jitterFor } from '../../src/schedule/index.js';

const AT = Date.parse('2026-06-01T09:00Z');

describe('jitterFor', () => {
  test('the same scheduler and instant always get the same delay', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 4e12 }), fc.integer({ min: 2, max: 1e9 }), (id, instant, jitter) => {
        expect(jitterFor(id, instant, jitter)).toBe(jitterFor(id, instant, jitter));
      }),
    );
    // Pinned: every process and every Hopper version must agree on an occurrence's delay.
    expect(jitterFor('nightly', AT, 60_000)).toBe(1822);
  });

  test('in [0, jitter), an integer', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 4e12 }), fc.double({ min: 0, max: 1e9, noNaN: true }), (id, instant, jitter) => {
        const delay = jitterFor(id, instant, jitter);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(Math.max(1, jitter));
      }),
    );
  });

  test('never reaches the next occurrence', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: 0, max: 4e12 }),
        fc.integer({ min: 1, max: 1e7 }),
        fc.integer({ min: 1, max: 1e7 }),
        (id, instant, jitter, gap) => {
          const delay = jitterFor(id, instant, jitter, instant + gap);
          expect(instant + delay).toBeLessThan(instant + gap);
          expect(delay).toBeLessThan(jitter);
        },
      ),
    );
    expect(jitterFor('x', AT, 60_000, AT + 1)).toBe(0);
    expect(jitterFor('x', AT, 60_000, AT)).toBe(0);
    expect(jitterFor('x', AT, 60_000, null)).toBe(jitterFor('x', AT, 60_000));
  });

  test('no jitter, no delay', () => {
    expect(jitterFor('x', AT, 0)).toBe(0);
    expect(jitterFor('x', AT, 1)).toBe(0);
    expect(jitterFor('x', AT, Number.NaN)).toBe(0);
  });

  test('spreads: different schedulers and instants get different delays, covering the range', () => {
    const delays = Array.from({ length: 2000 }, (_, index) => jitterFor(`scheduler-${index % 50}`, AT + index * 60_000, 1000));
    expect(new Set(delays).size).toBeGreaterThan(800);
    const buckets = Array.from({ length: 10 }, (_, bucket) => delays.filter((d) => Math.floor(d / 100) === bucket).length);
    for (const count of buckets) expect(count).toBeGreaterThan(120); // about 200 each
    expect(jitterFor('a', AT, 1e9)).not.toBe(jitterFor('b', AT, 1e9));
    expect(jitterFor('a', AT, 1e9)).not.toBe(jitterFor('a', AT + 1, 1e9));
  });
});
