/**
 * Model-based property test of groups: random sequences of adds to groups (and without one),
 * claims, completions, failures with retry and backoff, crashes and stall rescues, cancels and
 * retries, group pause/resume and concurrency and rate limits, against the real backend and the
 * model (model-support.ts). The round-robin between groups is the engine's choice; the model
 * checks it: every claim takes as many jobs as the limits allow, each group's in its own order,
 * and every group's counters (active, waiting, prioritized, paused) agree after every step.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';
import { applyCommand, runModel } from './model-harness.js';

const env = useHopper();

const GROUPS = ['a', 'b'] as const;
type GroupId = (typeof GROUPS)[number];

type Command =
  | { kind: 'add'; priority: number; delay: number; attempts: number; group: GroupId | undefined }
  | { kind: 'claim'; count: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number; retryDelay: number }
  | { kind: 'crash' }
  | { kind: 'advance'; ms: number }
  | { kind: 'rescue' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'retry'; pick: number }
  | { kind: 'pause'; group: GroupId; paused: boolean }
  | { kind: 'concurrency'; group: GroupId; concurrency: number | undefined }
  | { kind: 'limiter'; group: GroupId; on: boolean };

const group = fc.constantFrom(...GROUPS);

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      priority: fc.constantFrom(0, 0, 2),
      delay: fc.constantFrom(0, 0, 300),
      attempts: fc.constantFrom(1, 2),
      group: fc.constantFrom<GroupId | undefined>('a', 'a', 'b', undefined),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(10) }) },
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(10), retryDelay: fc.constantFrom(0, 200) }),
  fc.record({ kind: fc.constant('crash' as const) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(100, 600, 1500) }),
  fc.record({ kind: fc.constant('rescue' as const) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant('retry' as const), pick: fc.nat(10) }),
  fc.record({ kind: fc.constant('pause' as const), group, paused: fc.boolean() }),
  fc.record({ kind: fc.constant('concurrency' as const), group, concurrency: fc.constantFrom(1, 2, undefined) }),
  fc.record({ kind: fc.constant('limiter' as const), group, on: fc.boolean() }),
);

const addTo = (g: GroupId | undefined) => ({ kind: 'add', priority: 0, delay: 0, attempts: 2, group: g }) as const;

describe('groups against the model', () => {
  it('agrees with the model over random sequences with groups, pauses and limits', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 40 }), (commands) =>
        runModel(env, { grouped: true, auditEvery: 1 }, commands, applyCommand),
      ),
      {
        numRuns: 70,
        examples: [
          // A rate-limited group alone in the ring gets a second turn in the same claim: its limit still holds.
          [[{ kind: 'limiter', group: 'b', on: true }, addTo('b'), addTo('b'), { kind: 'claim', count: 2 }]],
          // The queue's first grouped job to become ready does so from delayed, inside the claim that takes it.
          [
            [
              { ...addTo('a'), delay: 300 },
              { kind: 'advance', ms: 600 },
              { kind: 'claim', count: 1 },
            ],
          ],
          // A group at its concurrency: its stalled job is rescued, the slot freed, the next one runs.
          [
            [
              { kind: 'concurrency', group: 'a', concurrency: 1 },
              addTo('a'),
              addTo('a'),
              addTo(undefined),
              { kind: 'claim', count: 3 },
              { kind: 'crash' },
              { kind: 'advance', ms: 1500 },
              { kind: 'rescue' },
              { kind: 'claim', count: 3 },
              { kind: 'cancel', pick: 0 },
              { kind: 'complete', pick: 0 },
              { kind: 'claim', count: 3 },
            ],
          ],
          // A group paused before the queue's first grouped job: its jobs are not claimed (found on
          // SQLite, where the plain claim took them), then run once it is resumed.
          [
            [
              { kind: 'pause', group: 'a', paused: true },
              addTo('a'),
              addTo(undefined),
              { kind: 'claim', count: 3 },
              { kind: 'pause', group: 'a', paused: false },
              { kind: 'claim', count: 3 },
            ],
          ],
          // A paused, rate-limited group: nothing of it runs until resumed and its window reopens.
          [
            [
              { kind: 'limiter', group: 'b', on: true },
              addTo('b'),
              addTo('b'),
              { kind: 'claim', count: 2 },
              { kind: 'pause', group: 'b', paused: true },
              { kind: 'advance', ms: 600 },
              { kind: 'claim', count: 2 },
              { kind: 'pause', group: 'b', paused: false },
              { kind: 'claim', count: 2 },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});
