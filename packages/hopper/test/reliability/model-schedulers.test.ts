/**
 * Model-based property test of job schedulers: random sequences of clock advances, scheduler
 * ticks (advance every due scheduler, as a worker's tick does), claims, completions, failures
 * with and without backoff, triggers, pause/resume, and remove/cancel/drain/clean aimed at the
 * pending run, on two schedulers with random overlap, catch-up, window and jitter. Run against the
 * real backend with a FakeClock; after every step the invariant audit, and the scheduler rules:
 *
 * - each never-started occurrence that falls due is judged exactly once (fired, or deleted as
 *   skipped/missed); a retry of an occurrence is never judged, never deleted, counts nothing;
 * - a pending run promoted within `catchupWindow` of its (jittered) due time, before the next
 *   instant, is not missed (a new `every` scheduler's first run included);
 * - remove and cancel of a pending run are refused with SchedulerJobError; drain and clean keep it;
 * - after a tick, every scheduler that is not paused has a pending run (waiting for its time, or
 *   ready and not taken yet); a claim of a pending run advances its scheduler, as a worker does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { writeApplied, type JobRecord, type QueueBackend } from '../../src/backend/backend.js';
import { advanceScheduler, advanceTaken, takenOccurrence } from '../../src/maintenance/scheduler-tick.js';
import { FakeClock, SchedulerJobError, type Queue, type RepeatOptions } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

const EVERY = 1000;
const LOCK_MS = 60_000;
const SCHEDULERS = ['a', 'b'] as const;

type Command =
  | { kind: 'advance'; ms: number }
  | { kind: 'tick' }
  | { kind: 'claim'; count: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number; retryDelay: number }
  | { kind: 'trigger'; s: number }
  | { kind: 'pause'; s: number; paused: boolean }
  | { kind: 'remove'; s: number; how: 'remove' | 'cancel' }
  | { kind: 'drain' }
  | { kind: 'clean' };

const spec = fc.record({
  overlap: fc.constantFrom('skip' as const, 'bufferOne' as const, 'allowAll' as const),
  catchup: fc.constantFrom('latest' as const, 'all' as const, 'none' as const),
  catchupWindow: fc.constantFrom(300, 2500),
  jitter: fc.constantFrom(0, 0, 900),
});

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(100, 400, 1000, 3500) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tick' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(5), retryDelay: fc.constantFrom(0, 300, 1500) }) },
  fc.record({ kind: fc.constant('trigger' as const), s: fc.nat(1) }),
  fc.record({ kind: fc.constant('pause' as const), s: fc.nat(1), paused: fc.boolean() }),
  fc.record({ kind: fc.constant('remove' as const), s: fc.nat(1), how: fc.constantFrom('remove' as const, 'cancel' as const) }),
  fc.record({ kind: fc.constant('drain' as const) }),
  fc.record({ kind: fc.constant('clean' as const) }),
);

const isOccurrence = (id: string): boolean => id.startsWith('sched:');

/** Totals of the judgement counters over both schedulers. */
async function counters(backend: QueueBackend): Promise<{ fired: number; judgedOut: number; missed: number }> {
  const totals = { fired: 0, judgedOut: 0, missed: 0 };
  for (const id of SCHEDULERS) {
    const s = await backend.getScheduler(id);
    if (!s) continue;
    totals.fired += s.fired;
    totals.judgedOut += s.skipped + s.missed;
    totals.missed += s.missed;
  }
  return totals;
}

async function delayedJobs(backend: QueueBackend): Promise<JobRecord[]> {
  const ids = await backend.getRange('delayed', 0, -1, true);
  return (await backend.getJobs(ids)).filter((j): j is JobRecord => j !== undefined);
}

/** The pending run of each scheduler: its id when it is an occurrence still waiting for its first run. */
/** Each scheduler's pending run: delayed for its time, or ready and not yet taken (a new `every` scheduler's first run, due at once). */
async function pendingRuns(backend: QueueBackend): Promise<Map<string, { id: string; due: number; instant: number; state: string }>> {
  const out = new Map<string, { id: string; due: number; instant: number; state: string }>();
  for (const id of SCHEDULERS) {
    const s = await backend.getScheduler(id);
    if (!s || !s.pendingId) continue;
    const job = await backend.getJob(s.pendingId);
    const state = job?.state ?? '';
    const notStarted = ['delayed', 'waiting', 'prioritized'].includes(state) && job?.attemptsStarted === 0;
    if (notStarted && s.nextDue !== undefined) {
      out.set(id, { id: s.pendingId, due: s.nextDue, instant: Number(s.pendingId.split(':').at(-1)), state });
    }
  }
  return out;
}

async function runSequence(
  specs: { overlap: 'skip' | 'bufferOne' | 'allowAll'; catchup: 'latest' | 'all' | 'none'; catchupWindow: number; jitter: number }[],
  start: number,
  commands: Command[],
): Promise<void> {
  const clock = new FakeClock(Date.UTC(2026, 0, 1) + start);
  const name = env.queueName('msched');
  const queue: Queue = env.queue(name, { clock });
  const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
  const cw = new Map<string, number>();
  for (const [i, id] of SCHEDULERS.entries()) {
    const repeat: RepeatOptions = { every: EVERY, ...specs[i] };
    await queue.upsertJobScheduler(id, repeat, { name: id, opts: { attempts: 2, removeOnComplete: false, removeOnFail: false } });
    cw.set(id, specs[i].catchupWindow);
  }
  const paused = new Set<string>();
  const held: { id: string; token: string; attempt: number }[] = [];
  const firstRuns = new Set<string>();
  // A job that drain, clean or remove deleted is gone: a trigger at the same (fake) instant may
  // create a new job under its id, whose first attempt is a first attempt again.
  const forgetRemoved = async (): Promise<void> => {
    const ids = [...firstRuns];
    const jobs = await backend.getJobs(ids);
    ids.forEach((id, i) => {
      if (jobs[i] === undefined) firstRuns.delete(id);
    });
  };
  let claims = 0;
  const next = { count: 0, lockMs: LOCK_MS, tokenPrefix: 'unused:' };

  /** Checks the judgement rules around a call that promotes due delayed jobs. */
  const promoting = async (call: () => Promise<void>): Promise<void> => {
    const now = clock.now();
    const before = await delayedJobs(backend);
    const pending = await pendingRuns(backend);
    const countsBefore = await counters(backend);
    // Due never-started occurrences are judged now; retries are not. (Dues of the pending runs are
    // known; other never-started occurrences are catch-up runs, due when created.)
    const pendingIds = new Set([...pending.values()].map((p) => p.id));
    const unjudged = before.filter(
      (j) =>
        isOccurrence(j.id) &&
        j.attemptsStarted === 0 &&
        (!pendingIds.has(j.id) || [...pending.values()].some((p) => p.id === j.id && p.due <= now)),
    );
    const retries = before.filter((j) => isOccurrence(j.id) && j.attemptsStarted > 0);
    await call();
    const after = await backend.getJobs(unjudged.map((j) => j.id));
    const countsAfter = await counters(backend);
    const deleted = after.filter((j) => j === undefined).length;
    const fired = after.filter((j) => j !== undefined && j.state !== 'delayed').length;
    expect(countsAfter.judgedOut - countsBefore.judgedOut).toBe(deleted);
    expect(countsAfter.fired - countsBefore.fired).toBe(fired);
    for (const r of await backend.getJobs(retries.map((j) => j.id))) expect(r).toBeDefined();
    // On time (within the window of its due time, before the next instant): not missed.
    const late = [...pending.values()].some((p) => p.due <= now && (now - p.due > cw.get(p.id.split(':')[1])! || now >= p.instant + EVERY));
    if (!late) expect(countsAfter.missed - countsBefore.missed).toBe(0);
  };

  for (const cmd of commands) {
    switch (cmd.kind) {
      case 'advance':
        clock.advance(cmd.ms);
        break;
      case 'tick': {
        for (let round = 0; round < 5; round++) {
          const due = await backend.getDueSchedulers(100, clock.now());
          if (due.length === 0) break;
          for (const id of due) await advanceScheduler(backend, clock, id);
        }
        // Every scheduler that is not paused waits for its next run.
        const pending = await pendingRuns(backend);
        for (const id of SCHEDULERS) if (!paused.has(id)) expect(pending.has(id), `scheduler ${id} has a pending run`).toBe(true);
        break;
      }
      case 'claim': {
        await forgetRemoved();
        const taken: { id: string; repeatJobKey?: string; attemptsStarted: number }[] = [];
        await promoting(async () => {
          const prefix = `w:${++claims}:`;
          const result = await backend.claim({ count: cmd.count, lockMs: LOCK_MS, tokenPrefix: prefix }, clock.now());
          for (const j of result.jobs) {
            // An occurrence's first attempt is claimed once.
            if (j.attemptsStarted === 1) {
              expect(firstRuns.has(j.id)).toBe(false);
              firstRuns.add(j.id);
            }
            held.push({ id: j.id, token: j.token, attempt: j.attemptsStarted });
            taken.push({ id: j.id, repeatJobKey: isOccurrence(j.id) ? j.id.split(':')[1] : undefined, attemptsStarted: j.attemptsStarted });
          }
        });
        // As a worker does before running them: a taken pending run advances its scheduler.
        for (const j of taken) {
          const schedulerId = takenOccurrence(j);
          if (schedulerId !== undefined) await advanceTaken(backend, clock, schedulerId, j.id);
        }
        break;
      }
      case 'complete':
      case 'fail': {
        if (held.length === 0) break;
        const fence = held.splice(cmd.pick % held.length, 1)[0];
        await promoting(async () => {
          const result =
            cmd.kind === 'complete'
              ? await backend.complete([{ ...fence, returnvalue: 'null', keep: { kind: 'keep' } }], next, clock.now())
              : await backend.fail(
                  [
                    {
                      ...fence,
                      reason: 'x',
                      stack: '',
                      stackTraceLimit: 1,
                      retryDelay: fence.attempt >= 2 ? -2 : cmd.retryDelay,
                      keep: { kind: 'keep' },
                    },
                  ],
                  next,
                  clock.now(),
                );
          expect(writeApplied(result.codes[0])).toBe(true);
        });
        break;
      }
      case 'trigger': {
        const id = SCHEDULERS[cmd.s];
        const before = await counters(backend);
        const job = await queue.triggerJobScheduler(id);
        const after = await counters(backend);
        // One run now (none if this instant was already triggered).
        expect(after.fired - before.fired).toBe(job ? 1 : 0);
        break;
      }
      case 'pause': {
        const id = SCHEDULERS[cmd.s];
        if (cmd.paused) {
          await queue.pauseJobScheduler(id);
          paused.add(id);
        } else {
          await queue.resumeJobScheduler(id);
          paused.delete(id);
        }
        break;
      }
      case 'remove': {
        const pending = (await pendingRuns(backend)).get(SCHEDULERS[cmd.s]);
        if (!pending) break;
        const attempt = cmd.how === 'remove' ? queue.remove(pending.id) : queue.cancelJob(pending.id);
        await expect(attempt).rejects.toBeInstanceOf(SchedulerJobError);
        expect(await backend.getState(pending.id)).toBe(pending.state);
        break;
      }
      case 'drain':
      case 'clean': {
        const pending = await pendingRuns(backend);
        if (cmd.kind === 'drain') await queue.drain(true);
        else await queue.clean(0, 0, 'delayed');
        for (const p of pending.values()) expect(await backend.getState(p.id)).toBe(p.state);
        await forgetRemoved();
        break;
      }
    }
    expect(await backend.checkInvariants()).toEqual([]);
  }
}

describe('job schedulers against their rules', () => {
  it('hold over random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(spec, { minLength: 2, maxLength: 2 }),
        fc.integer({ min: 0, max: EVERY - 1 }),
        fc.array(command, { minLength: 5, maxLength: 40 }),
        (specs, start, commands) => runSequence(specs, start, commands),
      ),
      {
        numRuns: 100,
        // Replays a failure a run reported: FC_SEED=<seed> FC_PATH=<path> npx vitest run <this file>.
        ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH, endOnFailure: true } : {}),
        // Hand-picked: an occurrence that fails and is retried before its scheduler ticks (under
        // skip, the retry once deleted itself as "skipped"); the pending run drained, then a tick.
        examples: [
          [
            [
              { overlap: 'skip', catchup: 'latest', catchupWindow: 300, jitter: 0 },
              { overlap: 'bufferOne', catchup: 'all', catchupWindow: 2500, jitter: 900 },
            ],
            500,
            [
              { kind: 'claim', count: 2 },
              { kind: 'fail', pick: 0, retryDelay: 300 },
              { kind: 'tick' },
              { kind: 'advance', ms: 400 },
              { kind: 'claim', count: 1 },
              { kind: 'drain' },
              { kind: 'tick' },
              { kind: 'remove', s: 0, how: 'cancel' },
              { kind: 'advance', ms: 3500 },
              { kind: 'claim', count: 3 },
              { kind: 'tick' },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});
