/**
 * Model-based property test of flows: random sequences of flows added (a parent, its children
 * with each failure policy, and theirs), plain adds, claims, completions, failures with retry and
 * backoff, crashes and stall rescues, cancels (of a child, or of a parent: its pending children
 * are cancelled too) and retries, against the real backend and the model (model-support.ts),
 * under each queue rule for a child failing without a policy ('fail' or 'wait'). After every step
 * every job's state and attempts and every parent's dependency counts must agree.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import type { ChildFailurePolicy } from '../../src/backend/backend.js';
import { useHopper } from '../helpers/hopper.js';
import { applyCommand, runModel, type FlowSpec } from './model-harness.js';

const env = useHopper();

type Command =
  | { kind: 'flow'; root: FlowSpec }
  | { kind: 'add'; priority: number; delay: number; attempts: number }
  | { kind: 'claim'; count: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number; retryDelay: number }
  | { kind: 'crash' }
  | { kind: 'advance'; ms: number }
  | { kind: 'rescue' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'retry'; pick: number };

const policy = fc.constantFrom<ChildFailurePolicy>('none', 'fail', 'continue', 'ignore', 'remove');

function node(children: fc.Arbitrary<FlowSpec[]>): fc.Arbitrary<FlowSpec> {
  return fc.record({
    priority: fc.constantFrom(0, 0, 2),
    delay: fc.constantFrom(0, 0, 300),
    attempts: fc.constantFrom(1, 2),
    policy,
    children,
  });
}

const leaf = node(fc.constant([]));
const middle = node(fc.array(leaf, { maxLength: 2 }));
const root = node(fc.array(middle, { minLength: 1, maxLength: 3 }));

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('flow' as const), root }) },
  fc.record({
    kind: fc.constant('add' as const),
    priority: fc.constantFrom(0, 2),
    delay: fc.constantFrom(0, 300),
    attempts: fc.constantFrom(1, 2),
  }),
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(10) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(10), retryDelay: fc.constantFrom(0, 200) }) },
  fc.record({ kind: fc.constant('crash' as const) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(100, 600, 1500) }),
  fc.record({ kind: fc.constant('rescue' as const) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('retry' as const), pick: fc.nat(10) }),
);

const child = (p: ChildFailurePolicy, children: FlowSpec[] = []): FlowSpec => ({ priority: 0, delay: 0, attempts: 1, policy: p, children });

describe('flows against the model', () => {
  it('agrees with the model over random sequences of flows, failures and cancels', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<'fail' | 'wait'>('fail', 'wait'),
        fc.array(command, { minLength: 5, maxLength: 30 }),
        (childFailure, commands) => runModel(env, { childFailure, auditEvery: 1 }, commands, applyCommand),
      ),
      {
        numRuns: 60,
        examples: [
          // A child failing under each policy, one flow per policy; then the parents run.
          ...(['none', 'fail', 'continue', 'ignore', 'remove'] as const).map((p): ['wait', Command[]] => [
            'wait',
            [
              { kind: 'flow', root: child('none', [child(p), child('none')]) },
              { kind: 'claim', count: 1 },
              { kind: 'fail', pick: 0, retryDelay: 0 },
              { kind: 'claim', count: 1 },
              { kind: 'complete', pick: 0 },
              { kind: 'claim', count: 1 },
              { kind: 'complete', pick: 0 },
              { kind: 'retry', pick: 0 },
              { kind: 'claim', count: 3 },
            ],
          ]),
          // A child its parent let go of (ignored failure, here by a cancel), retried: pending for it again.
          [
            'wait',
            [
              { kind: 'flow', root: child('none', [child('ignore'), child('none')]) },
              { kind: 'cancel', pick: 1 },
              { kind: 'retry', pick: 0 },
              { kind: 'claim', count: 3 },
              { kind: 'complete', pick: 0 },
              { kind: 'complete', pick: 0 },
              { kind: 'claim', count: 1 },
            ],
          ],
          // Cancelling a parent cancels its pending children (and theirs), active ones included.
          [
            'fail',
            [
              { kind: 'flow', root: child('none', [child('continue', [child('ignore'), child('none')]), child('none')]) },
              { kind: 'claim', count: 1 },
              { kind: 'cancel', pick: 0 },
              { kind: 'complete', pick: 0 },
              { kind: 'claim', count: 3 },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});
