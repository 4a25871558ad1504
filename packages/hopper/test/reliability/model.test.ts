/**
 * Model-based property test: random sequences of add / add delayed / claim / complete / fail /
 * crash / stale write / advance clock / rescue, run against the real backend (through the seam,
 * with an injected clock) and against a small in-memory model of the state table. After every
 * step the stored states, the counts and the invariants must agree with the model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import type { QueueBackend } from '../../src/backend/backend.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

type State = 'waiting' | 'prioritized' | 'delayed' | 'active' | 'completed' | 'failed';
interface ModelJob {
  id: string;
  state: State;
  priority: number;
  attempts: number;
  attemptsMade: number;
  attemptsStarted: number;
  stalls: number;
  due: number;
  deadline: number;
  token: string | undefined;
  prioSeq: number;
}

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

const LOCK_MS = 1000;
const MAX_STALLED = 1;

class Model {
  jobs = new Map<string, ModelJob>();
  wait: string[] = [];
  nextId = 1;
  prioSeq = 0;
  now = 1_000_000;

  private pushReady(job: ModelJob, front: boolean): void {
    if (job.priority > 0) {
      job.state = 'prioritized';
      job.prioSeq = ++this.prioSeq;
    } else {
      job.state = 'waiting';
      if (front) this.wait.unshift(job.id);
      else this.wait.push(job.id);
    }
  }

  add(priority: number, delay: number, attempts: number): string {
    const id = String(this.nextId++);
    const job: ModelJob = {
      id,
      state: 'waiting',
      priority,
      attempts,
      attemptsMade: 0,
      attemptsStarted: 0,
      stalls: 0,
      due: 0,
      deadline: 0,
      token: undefined,
      prioSeq: 0,
    };
    this.jobs.set(id, job);
    if (delay > 0) {
      job.state = 'delayed';
      job.due = this.now + delay;
    } else this.pushReady(job, false);
    return id;
  }

  private byScoreThenId(a: [number, string], b: [number, string]): number {
    return a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
  }

  /** Every call that claims (claim, complete, fail: even with nothing to claim) first promotes due delayed jobs. */
  promoteDue(): void {
    const due = [...this.jobs.values()].filter((j) => j.state === 'delayed' && j.due <= this.now);
    for (const [, id] of due.map((j): [number, string] => [j.due, j.id]).sort((a, b) => this.byScoreThenId(a, b))) {
      this.pushReady(this.jobs.get(id)!, false);
    }
  }

  claim(count: number, tokenPrefix: string): string[] {
    this.promoteDue();
    const ids = this.wait.splice(0, count);
    if (ids.length < count) {
      const prio = [...this.jobs.values()]
        .filter((j) => j.state === 'prioritized')
        .sort((a, b) => a.priority - b.priority || a.prioSeq - b.prioSeq);
      ids.push(...prio.slice(0, count - ids.length).map((j) => j.id));
    }
    ids.forEach((id, i) => {
      const job = this.jobs.get(id)!;
      job.state = 'active';
      job.attemptsStarted++;
      job.deadline = this.now + LOCK_MS;
      job.token = `${tokenPrefix}${i + 1}`;
    });
    return ids;
  }

  complete(id: string): void {
    const job = this.jobs.get(id)!;
    job.state = 'completed';
    job.attemptsMade++;
    job.token = undefined;
    this.promoteDue();
  }

  fail(id: string, retryDelay: number): void {
    const job = this.jobs.get(id)!;
    job.attemptsMade++;
    job.token = undefined;
    if (job.attemptsMade >= job.attempts) job.state = 'failed';
    else if (retryDelay > 0) {
      job.state = 'delayed';
      job.due = this.now + retryDelay;
    } else this.pushReady(job, false);
    this.promoteDue();
  }

  rescue(): void {
    const expired = [...this.jobs.values()]
      .filter((j) => j.state === 'active' && j.deadline <= this.now)
      .map((j): [number, string] => [j.deadline, j.id])
      .sort((a, b) => this.byScoreThenId(a, b));
    for (const [, id] of expired) {
      const job = this.jobs.get(id)!;
      job.stalls++;
      job.token = undefined;
      if (job.stalls > MAX_STALLED) {
        job.state = 'failed';
        job.attemptsMade++;
      } else this.pushReady(job, true);
    }
  }
}

async function runSequence(commands: Command[]): Promise<void> {
  const model = new Model();
  const backend: QueueBackend = createBackend({
    connection: env.url,
    prefix: env.prefix,
    queueName: env.queueName('model'),
    role: 'command',
  });
  await backend.initQueue({ maxEvents: 100, epoch: 'model' });
  let held: { id: string; token: string; attempt: number }[] = [];
  const staleFences: { id: string; token: string; attempt: number }[] = [];
  let claims = 0;
  let step = 0;
  try {
    for (const cmd of commands) {
      switch (cmd.kind) {
        case 'add': {
          const expected = model.add(cmd.priority, cmd.delay, cmd.attempts);
          const { ids } = await backend.addJobs(
            [{ name: 'm', data: '{}', opts: '', customId: '', priority: cmd.priority, delay: cmd.delay, lifo: false, timestamp: 0 }],
            undefined,
            model.now,
          );
          expect(ids).toEqual([expected]);
          break;
        }
        case 'claim': {
          const prefix = `w:${++claims}:`;
          const expected = model.claim(cmd.count, prefix);
          const result = await backend.claim({ count: cmd.count, lockMs: LOCK_MS, tokenPrefix: prefix }, model.now);
          expect(result.jobs.map((j) => j.id)).toEqual(expected);
          held.push(...result.jobs.map((j) => ({ id: j.id, token: j.token, attempt: j.attemptsStarted })));
          break;
        }
        case 'complete':
        case 'fail': {
          if (held.length === 0) break;
          const fence = held.splice(cmd.pick % held.length, 1)[0];
          const next = { count: 0, lockMs: LOCK_MS, tokenPrefix: 'unused:' };
          let code: number;
          if (cmd.kind === 'complete') {
            model.complete(fence.id);
            code = (await backend.complete([{ ...fence, returnvalue: 'null', keep: { kind: 'keep' } }], next, model.now)).codes[0];
          } else {
            const job = model.jobs.get(fence.id)!;
            const exhausted = job.attemptsMade + 1 >= job.attempts;
            model.fail(fence.id, cmd.retryDelay);
            const failure = {
              ...fence,
              reason: 'x',
              stack: '',
              stackTraceLimit: 1,
              retryDelay: exhausted ? -2 : cmd.retryDelay,
              keep: { kind: 'keep' as const },
            };
            code = (await backend.fail([failure], next, model.now)).codes[0];
          }
          expect(code).toBeGreaterThan(0);
          break;
        }
        case 'crash':
          staleFences.push(...held);
          held = [];
          break;
        case 'stale': {
          if (staleFences.length === 0) break;
          const fence = staleFences[cmd.pick % staleFences.length];
          const job = model.jobs.get(fence.id)!;
          const result = await backend.complete(
            [{ ...fence, returnvalue: '"stale"', keep: { kind: 'keep' } }],
            { count: 0, lockMs: LOCK_MS, tokenPrefix: 'unused:' },
            model.now,
          );
          // Completing with a crashed attempt's fence succeeds only if that attempt still holds the job.
          const stillHolds = job.state === 'active' && job.token === fence.token && job.attemptsStarted === fence.attempt;
          if (stillHolds) model.complete(fence.id);
          else model.promoteDue();
          expect(result.codes[0] > 0).toBe(stillHolds);
          break;
        }
        case 'advance':
          model.now += cmd.ms;
          break;
        case 'rescue': {
          model.rescue();
          await backend.rescueStalled(
            { maxStalledCount: MAX_STALLED, limit: 1000, intervalMs: 1, force: true, failKeep: { kind: 'keep' }, eventsMaxAgeMs: 0 },
            model.now,
          );
          // Rescued jobs are no longer held by anyone.
          held = held.filter((f) => model.jobs.get(f.id)?.token === f.token);
          break;
        }
      }
      for (const job of model.jobs.values()) {
        const stored = await backend.getJob(job.id);
        expect({ id: job.id, state: stored?.state, made: stored?.attemptsMade, started: stored?.attemptsStarted }).toEqual({
          id: job.id,
          state: job.state,
          made: job.attemptsMade,
          started: job.attemptsStarted,
        });
      }
      // The audit scans the keyspace (shared with other test files): every few steps, and at the end.
      if (++step % 5 === 0) expect(await backend.checkInvariants()).toEqual([]);
    }
    expect(await backend.checkInvariants()).toEqual([]);
  } finally {
    await backend.close();
  }
}

describe('engine against the state-table model', () => {
  it('agrees with the model over random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 60 }), (commands) => runSequence(commands)),
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
