// The validation layer's alternatives (anyOf) try only the specs that can accept the value's kind:
// an accepted value builds no error on the way. Before, `removeOnComplete: { count }` (the common
// production setting) built and caught two refusals per job added: an add cost ~17 µs of CPU in
// the producer instead of ~1 (docs/performance.md, "Validation on the add path").
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../../src/index.js';
import { anyOf, bool, int, kindOf, object, str, validate, type Spec, type ValueKind } from '../../src/validation/kit.js';
import { JOB_OPTIONS_SPEC } from '../../src/validation/job-options.js';

afterEach(() => vi.restoreAllMocks());

describe('anyOf and value kinds', () => {
  it('names the kind of any value', () => {
    expect([true, 1, 'a', {}, () => 1, [], null, undefined, 1n, Symbol('s')].map(kindOf)).toEqual([
      'boolean',
      'number',
      'string',
      'object',
      'function',
      'array',
      'null',
      'other',
      'other',
      'other',
    ]);
  });

  it('skips the alternatives of another kind, and tries those without a kind', () => {
    const calls: string[] = [];
    // A spec that records its calls and accepts values of `kind` (strings when it declares none).
    const spy = (name: string, kind?: ValueKind): Spec => ({
      accepted: name,
      kind,
      check(value, path) {
        calls.push(name);
        if (kindOf(value) !== (kind ?? 'string')) throw new InvalidOptionsError(`${path}: not ${name}`);
      },
    });
    const spec = anyOf([spy('number', 'number'), spy('untyped'), spy('object', 'object')]);
    spec.check({ count: 1 }, 'opt');
    expect(calls).toEqual(['untyped', 'object']);
    calls.length = 0;
    spec.check(5, 'opt');
    expect(calls).toEqual(['number']);
    calls.length = 0;
    expect(() => spec.check([1], 'opt')).toThrow(InvalidOptionsError);
    expect(calls).toEqual(['untyped']);
  });

  it('refuses as before: one error listing every form, whatever kind was skipped', () => {
    const spec = anyOf([bool, int(0, 10), object({ n: int() }), str()]);
    for (const value of [null, [1], 11, { n: -1 }, '', () => 1]) {
      expect(() => validate(spec, value, 'opt')).toThrow(
        /a boolean \(true or false\), or an integer from 0 to 10, or an object with n, or a non-empty string/,
      );
    }
    for (const value of [true, 3, { n: 2 }, 'x']) expect(() => validate(spec, value, 'opt')).not.toThrow();
  });

  it("accepts a job's retention options without building an error", () => {
    const built = vi.spyOn(InvalidOptionsError, 'of');
    for (const opts of [
      { removeOnComplete: { count: 1000 }, removeOnFail: { age: 3600, count: 10 } },
      { removeOnComplete: true, removeOnFail: 100 },
      { removeOnComplete: false, delay: 1000, attempts: 3, backoff: { type: 'exponential', delay: 100 } },
    ]) {
      validate(JOB_OPTIONS_SPEC, opts, '');
    }
    expect(built).not.toHaveBeenCalled();
    // A refusal still goes through it, naming the option.
    expect(() => validate(JOB_OPTIONS_SPEC, { removeOnComplete: { count: -1 } }, '')).toThrow(/removeOnComplete/);
    expect(built).toHaveBeenCalled();
  });
});
