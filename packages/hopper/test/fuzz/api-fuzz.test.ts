/**
 * Issue 34's fuzzer: drives the public API (constructors, adds, flows, reads, job and queue
 * operations) with generated and hostile values for every option and argument, on the backend under
 * test (this file runs on both tiers). After each call it asserts:
 *
 * - a refusal is one of Hopper's typed errors (never a raw TypeError, ReplyError, SqliteError, nor
 *   a ScriptError or a BackendError for something unexpected: those are defects), and nothing was
 *   written (the store's snapshot under the test's prefix is unchanged);
 * - a success leaves the invariant audit clean, and a job it added can be completed or failed;
 * - the active job the fuzzer holds stays active (no call may start it again);
 * - no unhandled rejection or uncaught exception, no call past its bound (5 s), no event-loop stall
 *   over 1 s.
 *
 * A short run is part of `npm test` (seed HOPPER_FUZZ_SEED, default fixed: replay a failure with
 * the seed and path fast-check prints); `npm run test:fuzz` runs a long one with a fresh seed.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendError, FlowProducer, hopperErrorCode, Queue, QueueEvents, ScriptError, Worker, type Job } from '../../src/index.js';
import { JOB_OPTIONS_SPEC } from '../../src/validation/job-options.js';
import { COMPONENT_OPTION_SPECS } from '../../src/validation/component-options.js';
import { JOB_STATES } from '../../src/job/states.js';
import { assertInvariants, testConnection, TEST_BACKEND } from '../helpers/hopper.js';
import { storeSnapshots } from '../helpers/store-snapshot.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The seed: HOPPER_FUZZ_SEED (a number, or `random` for a fresh one, shown in the test's name). */
const SEED =
  process.env.HOPPER_FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.HOPPER_FUZZ_SEED ?? 34_034);
/** Calls per run: about 30 s on a 2-core machine by default. */
const RUNS = Number(process.env.HOPPER_FUZZ_RUNS ?? 800);
const CALL_BOUND_MS = 5_000;
const STALL_BOUND_NS = 1e9;

/** Values real callers pass by mistake, and worse. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    Number.NaN,
    Infinity,
    -Infinity,
    -0,
    -1,
    0,
    1,
    1.5,
    1e308,
    2 ** 31,
    Number.MAX_SAFE_INTEGER,
    '',
    'abc',
    '100',
    '\uD800',
    'a\uDC00b',
    'constructor',
    '__proto__',
    'active',
    'bogus',
    '9999999999999999999999-0',
    true,
    false,
    [],
    {},
    [null],
    { count: 1.5 },
    { age: 'x' },
    { age: 1e18 },
    { age: 0.0005 },
    { id: '' },
    { type: 'fixed', delay: 1e308 },
    { queue: 'no such' },
    { maxSize: -1 },
    10n,
    () => 1,
  ),
  fc.integer({ min: -5, max: 5 }),
  fc.double(),
  fc.string({ maxLength: 6 }),
  fc.boolean(),
);

/** Plausible values, so some calls go through and their writes are audited. */
const plausible: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  0,
  1,
  2,
  100,
  1000,
  true,
  false,
  'a',
  'fixed',
  { count: 1 },
  { age: 60 },
  { id: 'g' },
  { type: 'fixed', delay: 10 },
  { type: 'exponential', delay: 5, jitter: 0.5 },
  { max: 10, duration: 1000 },
  'completed',
  'failed',
  'wait',
  'latest',
  'start',
  { every: 60_000 },
  { weighted: true },
);

const value = fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: hostile });

/** Either one of the `good` values, or a hostile one (half and half). */
function or(...good: fc.Arbitrary<unknown>[]): fc.Arbitrary<unknown> {
  return fc.oneof(...good, hostile);
}

/** State names, real and not: where a method takes one, a wrong one is the likeliest mistake. */
const stateName: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  ...JOB_STATES,
  'wait',
  'paused',
  'repeat',
  'bogus',
  'constructor',
  '__proto__',
  'meta',
);

/** What a list of jobs should not hold: anything but a `{ name, data, opts }` entry. */
const notAnEntry: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(null, undefined, 0, 'job', [], [null]);

/** An options object drawn from an option set's declared fields (and now and then a typo). */
function optionsOf(fields: Iterable<string>, avoid: readonly string[] = []): fc.Arbitrary<Record<string, unknown>> {
  const names = [...fields].filter((name) => !avoid.includes(name));
  const key = fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constantFrom('atempts', 'weigthed', 'dely', 'x') },
  );
  return fc.dictionary(key, value, { maxKeys: 3 });
}

const jobOptions = optionsOf(JOB_OPTIONS_SPEC.fields.keys(), ['repeat', 'parent', 'telemetry']);
const workerOptions = optionsOf(COMPONENT_OPTION_SPECS.Worker.fields.keys(), ['connection', 'prefix', 'clock', 'telemetry', 'autorun']);
const queueOptions = optionsOf(COMPONENT_OPTION_SPECS.Queue.fields.keys(), ['connection', 'prefix', 'clock', 'telemetry']);
const eventsOptions = optionsOf(COMPONENT_OPTION_SPECS.QueueEvents.fields.keys(), ['connection', 'prefix', 'clock', 'autorun']);

/** One call of the public API, with its generated arguments. */
type Call = { op: string; args: unknown[] };

const calls: fc.Arbitrary<Call> = fc.oneof(
  fc
    .tuple(fc.oneof(fc.constant('job'), hostile), fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostile), jobOptions)
    .map((args) => ({ op: 'add', args })),
  fc
    .array(fc.oneof(fc.record({ name: fc.constant('bulk'), data: fc.constant({}), opts: jobOptions }), notAnEntry, hostile), {
      maxLength: 3,
    })
    .map((list) => ({
      op: 'addBulk',
      args: [list],
    })),
  workerOptions.map((opts) => ({ op: 'worker', args: [opts] })),
  fc
    .tuple(fc.oneof({ weight: 4, arbitrary: fc.constant('side') }, { weight: 1, arbitrary: hostile }), queueOptions)
    .map((args) => ({ op: 'queue', args })),
  eventsOptions.map((opts) => ({ op: 'events', args: [opts] })),
  fc.tuple(jobOptions, jobOptions, fc.oneof(fc.constant(undefined), jobOptions, hostile)).map((args) => ({ op: 'flow', args })),
  fc.array(fc.oneof(stateName, value), { maxLength: 3 }).map((types) => ({ op: 'getJobCounts', args: types })),
  fc
    .oneof(fc.record({ state: stateName, count: fc.constantFrom(undefined, 10) }), optionsOf(['state', 'count', 'timestamp']), hostile)
    .map((opts) => ({ op: 'retryJobs', args: [opts] })),
  fc
    .tuple(
      or(fc.constantFrom(10, 100)),
      or(fc.constantFrom(1000, 60_000)),
      fc.oneof(fc.constant(undefined), optionsOf(['weighted']), hostile),
    )
    .map((args) => ({ op: 'setGlobalRateLimit', args })),
  fc.tuple(value, fc.oneof(optionsOf(['from', 'follow', 'attempts']), hostile)).map((args) => ({ op: 'readStream', args })),
  fc.tuple(value, value).map((args) => ({ op: 'extendLock', args })),
  fc.oneof(optionsOf(['priority', 'lifo']), hostile).map((opts) => ({ op: 'changePriority', args: [opts] })),
  value.map((delay) => ({ op: 'changeDelay', args: [delay] })),
  fc.tuple(value, value).map((args) => ({ op: 'retryHeld', args })),
  fc.oneof(optionsOf(['maxTurns', 'maxCost', 'name', 'priority', 'delay']), hostile).map((opts) => ({ op: 'continueWith', args: [opts] })),
  fc
    .tuple(or(fc.constantFrom(0, 1000)), or(fc.constantFrom(0, 10)), or(fc.constantFrom('completed', 'failed', 'wait', 'delayed')))
    .map((args) => ({ op: 'clean', args })),
  fc
    .tuple(fc.oneof(fc.constant('s1'), hostile), fc.oneof(optionsOf(['every', 'pattern', 'limit', 'jitter', 'tz']), hostile))
    .map((args) => ({
      op: 'upsertJobScheduler',
      args,
    })),
  fc
    .tuple(fc.oneof(fc.constant('g'), hostile), fc.oneof(optionsOf(['concurrency', 'limiter', 'maxSize', 'weight']), hostile))
    .map((args) => ({
      op: 'setGroupOptions',
      args,
    })),
  fc.tuple(value).map((args) => ({ op: 'waitUntilFinished', args })),
);

interface World {
  url: string;
  prefix: string;
  name: string;
  queue: Queue;
  events: QueueEvents;
  flows: FlowProducer;
  manual: Worker;
  /** The active job the fuzzer holds (under token 'held'): no call may start it again. */
  held: Job;
  /** A delayed job to change. */
  delayed: Job;
  finished: Job;
  snapshots: ReturnType<typeof storeSnapshots>;
  dispose: () => void;
}

let world: World;
const problems: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  problems.push(reason);
};

/** Runs `fn`, failing if it takes longer than the call bound. */
async function bounded<T>(what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${CALL_BOUND_MS} ms`)), CALL_BOUND_MS);
  });
  try {
    return await Promise.race([fn(), limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error is one Hopper means to give a caller (typed, and not an internal failure). */
function expectTypedRefusal(err: unknown, call: Call): void {
  const shown = `${call.op}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
  expect(hopperErrorCode(err), `untyped error from ${shown}`).toBeDefined();
  expect(err instanceof ScriptError, `a script failed: ${shown}`).toBe(false);
  expect(err instanceof BackendError && /unexpected/.test(err.message), `an internal failure: ${shown}`).toBe(false);
}

/** Waits for a component the call made to be ready; if it never is, closes it before rethrowing (nothing left running). */
async function readyOrClose(made: { waitUntilReady(): Promise<unknown>; close(): Promise<void> }): Promise<void> {
  try {
    await made.waitUntilReady();
  } catch (err) {
    await bounded('close', () => made.close());
    throw err;
  }
}

/** Closes a component the call made, within the bound. */
async function closeMade(made: { close(): Promise<void> } | undefined): Promise<void> {
  if (made) await bounded('close', () => made.close());
}

async function run(call: Call): Promise<{ made?: { close(): Promise<void> }; added?: Job[] }> {
  const w = world;
  const [a, b, c] = call.args as [unknown, unknown, unknown];
  const base = { connection: w.url, prefix: w.prefix };
  switch (call.op) {
    case 'add':
      return { added: [await w.queue.add(a as string, b, c as object)] };
    case 'addBulk':
      return { added: await w.queue.addBulk(a as never) };
    case 'worker': {
      const worker = new Worker(w.name, null, { ...base, ...(a as object), autorun: false });
      worker.on('error', (err) => problems.push(err));
      await readyOrClose(worker);
      return { made: worker };
    }
    case 'queue': {
      const queue = new Queue(a as string, { ...base, ...(b as object) });
      queue.on('error', (err) => problems.push(err));
      await readyOrClose(queue);
      return { made: queue };
    }
    case 'events': {
      const events = new QueueEvents(w.name, { ...base, ...(a as object), autorun: false });
      events.on('error', (err) => problems.push(err));
      await readyOrClose(events);
      return { made: events };
    }
    case 'flow': {
      const tree = {
        name: 'root',
        queueName: w.name,
        opts: a as object,
        children: [{ name: 'leaf', queueName: w.name, opts: b as object }],
      };
      const node = await w.flows.add(
        tree,
        c === undefined ? undefined : { queuesOptions: { [w.name]: { defaultJobOptions: c as object } } },
      );
      return { added: [node.job, ...(node.children ?? []).map((child) => child.job)] };
    }
    case 'getJobCounts': {
      const counts = await w.queue.getJobCounts(...(call.args as never[]));
      for (const [state, n] of Object.entries(counts)) {
        expect([
          'waiting',
          'wait',
          'paused',
          'repeat',
          'prioritized',
          'delayed',
          'active',
          'waiting-children',
          'completed',
          'failed',
        ]).toContain(state);
        expect(Number.isInteger(n) && n >= 0).toBe(true);
      }
      return {};
    }
    case 'retryJobs':
      await w.queue.retryJobs(a as never);
      return {};
    case 'setGlobalRateLimit':
      await w.queue.setGlobalRateLimit(a as number, b as number, c as never);
      await w.queue.removeGlobalRateLimit();
      return {};
    case 'readStream': {
      const controller = new AbortController();
      const reading = w.queue.readStream(typeof a === 'string' ? a : (w.finished.id as string), {
        ...(b as object),
        signal: controller.signal,
      });
      controller.abort();
      await reading.next();
      return {};
    }
    case 'extendLock':
      await w.held.extendLock(typeof a === 'string' && a !== '' ? 'held' : (a as string), b as number);
      return {};
    case 'changePriority':
      await w.delayed.changePriority(a as never);
      return {};
    case 'changeDelay':
      await w.delayed.changeDelay(a as number);
      return {};
    case 'retryHeld':
      await w.held.retry(a as never, b as never);
      return {};
    case 'continueWith': {
      const id = await w.held.continueWith({ turn: 1 }, a as never);
      const next = await w.queue.getJob(id);
      return { added: next ? [next] : [] };
    }
    case 'clean':
      await w.queue.clean(a as number, b as number, c as never);
      return {};
    case 'upsertJobScheduler':
      await w.queue.upsertJobScheduler(a as string, b as never, { name: 'tick' });
      await w.queue.removeJobScheduler(a as string);
      return {};
    case 'setGroupOptions':
      await w.queue.setGroupOptions(a as string, b as never);
      return {};
    case 'waitUntilFinished':
      await w.finished.waitUntilFinished(w.events, a as number);
      return {};
    default:
      throw new Error(`unknown op ${call.op}`);
  }
}

/** Completes or fails whatever jobs are ready (the fuzzer's adds), as a worker would. */
async function processReady(turn: number): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const job = await world.manual.getNextJob(`t${turn}-${i}`, { block: false });
    if (!job) return;
    if ((turn + i) % 2 === 0) await job.moveToCompleted({ ok: true }, `t${turn}-${i}`);
    else await job.moveToFailed(new Error('fuzz failure'), `t${turn}-${i}`);
  }
}

describe('fuzz: the public API with generated and hostile arguments', () => {
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
    let url = testConnection();
    let dispose = (): void => undefined;
    if (TEST_BACKEND === 'sqlite') {
      // A file, so the snapshot can read it from a second connection.
      const dir = mkdtempSync(join(tmpdir(), 'hopper-fuzz-'));
      url = `sqlite:${join(dir, 'fuzz.db')}`;
      dispose = () => rmSync(dir, { recursive: true, force: true });
    }
    const prefix = `fz${Date.now().toString(36)}`;
    const name = 'fuzz';
    const base = { connection: url, prefix };
    const queue = new Queue(name, base);
    const events = new QueueEvents(name, base);
    const flows = new FlowProducer(base);
    // Manual processing: its lock lasts the whole run, renewed by no timer during it; no latency
    // histograms (flushed by a timer every 5 s: a write no call under test made).
    const manual = new Worker(name, null, { ...base, lockDuration: 600_000, latencyMetrics: false });
    for (const c of [queue, events, manual, flows]) c.on('error', (err: unknown) => problems.push(err));
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), manual.waitUntilReady(), flows.waitUntilReady()]);
    const finished = await queue.add('finished', {}, { jobId: 'finished' });
    const first = (await manual.getNextJob('setup')) as Job;
    await first.moveToCompleted('done', 'setup');
    await queue.add('held', {}, { jobId: 'held' });
    const held = (await manual.getNextJob('held')) as Job;
    const delayed = await queue.add('delayed', {}, { jobId: 'delayed', delay: 3_600_000 });
    world = { url, prefix, name, queue, events, flows, manual, held, delayed, finished, snapshots: storeSnapshots(url, prefix), dispose };
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
    if (!world) return;
    await world.held.moveToCompleted('done', 'held').catch(() => undefined);
    await world.manual.close();
    await world.events.close();
    await world.flows.close();
    await world.queue.obliterate({ force: true }).catch(() => undefined);
    await world.queue.close();
    await world.snapshots.close();
    world.dispose();
  });

  it(
    `typed refusals write nothing; successes keep the audit clean (seed ${SEED}, ${RUNS} runs)`,
    async () => {
      const loop = monitorEventLoopDelay({ resolution: 20 });
      loop.enable();
      let turn = 0;
      const stats = new Map<string, number>();
      try {
        await fc.assert(
          fc.asyncProperty(calls, async (call) => {
            turn++;
            const before = await world.snapshots.take();
            loop.reset();
            let outcome: Awaited<ReturnType<typeof run>> | undefined;
            let refusal: unknown;
            try {
              outcome = await bounded(call.op, () => run(call));
            } catch (err) {
              if (err instanceof Error && err.message.endsWith(`within ${CALL_BOUND_MS} ms`)) throw err;
              refusal = err;
            }
            expect(loop.max, `${call.op}: the event loop stalled`).toBeLessThan(STALL_BOUND_NS);
            const key = `${call.op} ${refusal === undefined ? 'ok' : 'refused'}`;
            stats.set(key, (stats.get(key) ?? 0) + 1);
            if (refusal !== undefined) {
              expectTypedRefusal(refusal, call);
              expect(await world.snapshots.take(), `${call.op} was refused but wrote`).toBe(before);
            } else {
              await closeMade(outcome?.made);
              await bounded('processing', () => processReady(turn));
              await assertInvariants(world.url, world.prefix);
            }
            expect(await world.queue.getJobState('held'), `${call.op} moved the held active job`).toBe('active');
            expect(problems, 'unhandled rejections, uncaught exceptions or error events').toEqual([]);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
      } finally {
        loop.disable();
        if (process.env.HOPPER_FUZZ_VERBOSE)
          console.log(
            [...stats]
              .sort()
              .map(([k, n]) => `${k}: ${n}`)
              .join('\n'),
          );
      }
    },
    60_000 + RUNS * 100,
  );
});
