/**
 * Model-based property test: random sequences of add / add delayed / claim / complete / fail /
 * crash / stale write / advance clock / rescue, run against the real backend (through the seam,
 * with an injected clock) and against a small in-memory model of the state table. After every
 * step the stored states, the counts and the invariants must agree with the model.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';
import { applyCommand, runModel } from './model-harness.js';

const env = useHopper();

type Command =
  | { kind: 'add'; priority: number; delay: number; attempts: number }
  | { kind: 'claim'; count: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number; retryDelay: number }
  | { kind: 'crash' }
  | { kind: 'stale'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'rescue' };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      priority: fc.constantFrom(0, 0, 1, 3),
      delay: fc.constantFrom(0, 0, 100, 500),
      attempts: fc.constantFrom(1, 2, 3),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('claim' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(10), retryDelay: fc.constantFrom(0, 200) }),
  fc.record({ kind: fc.constant('crash' as const) }),
  fc.record({ kind: fc.constant('stale' as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(50, 600, 1500) }),
  fc.record({ kind: fc.constant('rescue' as const) }),
);

describe('engine against the state-table model', () => {
  it('agrees with the model over random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 60 }), (commands) => runModel(env, {}, commands, applyCommand)),
      {
        numRuns: 200,
        // Hand-picked sequences the random ones would reach only rarely.
        examples: [
          [
            [
              { kind: 'add', priority: 0, delay: 0, attempts: 1 },
              { kind: 'add', priority: 0, delay: 0, attempts: 1 },
              { kind: 'claim', count: 1 },
              { kind: 'advance', ms: 1500 },
              { kind: 'rescue' },
              { kind: 'claim', count: 1 },
              { kind: 'advance', ms: 1500 },
              { kind: 'rescue' },
              { kind: 'claim', count: 2 },
            ],
          ],
        ],
      },
    );
  }, 180_000);
});
