/**
 * Model-based property test of cancellation: random sequences of add / claim / complete / fail /
 * crash / stale write / advance clock / stall rescue / cancel (of a waiting, delayed or active job)
 * / retryJobs, against the real backend and the model (model-support.ts). The rules: a job
 * cancelled before it starts fails at once; one cancelled while active ends as cancelled however
 * its attempt ends, and never runs again (a stall rescue ends it failed as cancelled) unless it is
 * explicitly retried, which clears the cancel mark.
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
  | { kind: 'rescue' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'retry'; pick: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      priority: fc.constantFrom(0, 0, 2),
      delay: fc.constantFrom(0, 0, 300),
      attempts: fc.constantFrom(1, 2),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('claim' as const), count: fc.integer({ min: 1, max: 2 }) }) },
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(10), retryDelay: fc.constantFrom(0, 200) }),
  fc.record({ kind: fc.constant('crash' as const) }),
  fc.record({ kind: fc.constant('stale' as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(100, 1500) }),
  fc.record({ kind: fc.constant('rescue' as const) }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(10) }) },
  fc.record({ kind: fc.constant('retry' as const), pick: fc.nat(10) }),
);

const add = { kind: 'add', priority: 0, delay: 0, attempts: 2 } as const;

describe('cancellation against the model', () => {
  it('agrees with the model over random sequences with cancel and retry', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 40 }), (commands) =>
        runModel(env, { auditEvery: 1 }, commands, applyCommand),
      ),
      {
        numRuns: 100,
        examples: [
          // A cancelled active job whose worker died: the stall rescue ends it, it never runs again.
          [
            [
              add,
              { kind: 'claim', count: 1 },
              { kind: 'cancel', pick: 0 },
              { kind: 'crash' },
              { kind: 'advance', ms: 1500 },
              { kind: 'rescue' },
              { kind: 'claim', count: 1 },
            ],
          ],
          // A retried cancelled job runs and completes normally (the retry cleared the mark).
          [
            [
              add,
              { kind: 'claim', count: 1 },
              { kind: 'cancel', pick: 0 },
              { kind: 'complete', pick: 0 },
              { kind: 'retry', pick: 0 },
              { kind: 'claim', count: 1 },
              { kind: 'complete', pick: 0 },
            ],
          ],
          // Cancelled before it starts (delayed), retried, then run.
          [
            [
              { ...add, delay: 300 },
              { kind: 'cancel', pick: 0 },
              { kind: 'retry', pick: 0 },
              { kind: 'claim', count: 1 },
              { kind: 'fail', pick: 0, retryDelay: 0 },
              { kind: 'claim', count: 1 },
              { kind: 'complete', pick: 0 },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});
