/**
 * The worker parses each distinct options string once (job/job-json.ts parseOpts): jobs claimed
 * from a grouped queue carry one options string per group, and a worker round-robining over
 * 1,000 groups must not parse every job's options again.
 */
import { describe, expect, it } from 'vitest';
import { parseOpts } from '../../src/job/job-json.js';

const optsOf = (g: number) => JSON.stringify({ attempts: 3, removeOnComplete: true, group: { id: `tenant-${g}` } });

describe('parseOpts', () => {
  it('keeps the options of 1,000 groups parsed: the same string gives the same parsed object', () => {
    const first = Array.from({ length: 1_000 }, (_, g) => parseOpts(optsOf(g)));
    for (let g = 0; g < 1_000; g++) expect(parseOpts(optsOf(g))).toBe(first[g]);
    expect(first[999]).toEqual({ attempts: 3, removeOnComplete: true, group: { id: 'tenant-999' } });
  });

  it('is bounded by the characters it holds: past the bound it starts again, and still parses right', () => {
    const big = (i: number) => JSON.stringify({ i, pad: 'x'.repeat(100_000) });
    const a = parseOpts(big(0));
    for (let i = 1; i <= 12; i++) parseOpts(big(i));
    // 13 strings of ~100,000 characters exceed the 1 MiB bound: the first was dropped and is parsed again.
    const again = parseOpts(big(0));
    expect(again).not.toBe(a);
    expect(again).toEqual(a);
  });

  it("gives BullMQ's default options for an absent or empty string (attempts 0), and adds attempts 0 where none is stored", () => {
    expect(parseOpts(undefined)).toEqual({ attempts: 0 });
    expect(parseOpts('')).toEqual({ attempts: 0 });
    expect(parseOpts('{"priority":2}')).toEqual({ priority: 2, attempts: 0 });
  });
});
