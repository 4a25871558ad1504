/**
 * The idle wait with its claim behind it (QueueBackend.waitThenClaim, runtime/dispatcher.ts): an
 * idle worker sends its BLPOP on the marker and the claim on the same connection at once, so Redis
 * runs the claim as soon as the wait ends and a job added to an idle queue starts one round trip
 * sooner. Redis-only: the SQLite backend waits, then claims (it has no waitThenClaim). Checked
 * here: the claim is in Redis before any work arrives; it claims what the wake-up brought, or
 * what is ready when the wait times out; an interrupted wait whose claim may have run reports it,
 * and a closing worker then puts back what such a claim took without telling it; a wake-up that
 * reaches a wait connection after its worker left it (paused or closed; Redis has not seen the close
 * yet) claims nothing there: the job goes to the worker's current wait, or to another worker.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import type { QueueBackend, WakeClaim } from '../../src/backend/backend.js';
import type { Queue, Worker } from '../../src/index.js';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { SCRIPTS } from '../../src/backend/redis/scripts.generated.js';
import { useHopper } from '../helpers/hopper.js';
import { LingerProxy } from '../helpers/linger-proxy.js';
import { until } from '../helpers/wait.js';

const env = useHopper();

/** A control connection of the test's own, closed with the test. */
function connect(): Redis {
  const client = new Redis(env.url);
  env.track({ close: async () => void client.disconnect() });
  return client;
}

/**
 * Resolves once `count` connections are blocked in BLPOP with a command already queued behind it
 * (their query buffer).
 */
async function blockedWithClaimQueued(control: Redis, count = 1): Promise<void> {
  await until(
    async () =>
      String(await control.call('CLIENT', 'LIST'))
        .split('\n')
        .filter((line) => / cmd=blpop /.test(line) && /\bflags=b\b/.test(line) && Number(/ qbuf=(\d+) /.exec(line)?.[1] ?? 0) > 0).length >=
      count,
    `${count} connection(s) blocked in BLPOP with the claim queued behind it`,
  );
}

/**
 * Short locks and stall checks (the check runs once per interval across a queue's workers): a job
 * stranded under a left connection's claim is rescued as stalled within about a second, and the
 * test fails on its stall count.
 */
const STALL_FAST = { lockDuration: 1_000, stalledInterval: 200 } as const;

/** A worker connected through a LingerProxy, once idle in its wait with the claim queued behind it. */
async function idleBehindLingerProxy(
  name: string,
  control: Redis,
  opts: { drainDelay?: number } = {},
): Promise<{ worker: Worker; proxy: LingerProxy }> {
  const proxy = env.track(await LingerProxy.start(Number(new URL(env.url).port)));
  const worker = env.worker(name, async () => 'done', { connection: { host: '127.0.0.1', port: proxy.port }, ...STALL_FAST, ...opts });
  await blockedWithClaimQueued(control);
  return { worker, proxy };
}

/**
 * Leaves the idle wait (`leave`: pause or close) while the proxy keeps its connection open in
 * Redis, blocked with the claim queued; resolves once the worker's orphan walk has run.
 */
async function leaveAfterWalk(proxy: LingerProxy, leave: () => Promise<void>): Promise<void> {
  proxy.linger();
  const walked = proxy.seen(SCRIPTS.releaseOrphans.fn);
  await leave();
  await walked;
}

/** The id of the next job `worker` completes. */
function nextCompleted(worker: Worker): Promise<string> {
  return new Promise((resolve) => worker.once('completed', (job: { id?: string }) => resolve(job.id as string)));
}

async function expectStartedOnceWithoutStall(queue: Queue, id: string): Promise<void> {
  const stored = await queue.getJob(id);
  expect(stored?.stalledCounter).toBe(0);
  expect(stored?.attemptsStarted).toBe(1);
}

function backendFor(name: string): QueueBackend {
  return env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'worker' }));
}

describe('the idle wait carries its claim', () => {
  it('is in Redis before any work arrives, and claims the job whose add woke it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const control = connect();
    const backend = backendFor(name);
    expect(typeof backend.waitThenClaim).toBe('function');
    const pending: Promise<WakeClaim> = backend.waitThenClaim!(10_000, { count: 2, lockMs: 30_000, tokenPrefix: 'w1:1:' });
    await blockedWithClaimQueued(control);
    const job = await queue.add('wake', { n: 1 });
    const { claim, uncertain } = await pending;
    expect(uncertain).toBe(false);
    expect(claim?.jobs.map((j) => j.id)).toEqual([job.id]);
    expect(await queue.getJobState(job.id as string)).toBe('active');
    // Held by the claim's first token: the worker that sent it can finish it.
    const held = await control.hget(queueKeys(env.prefix, name).job(job.id as string), 'tk');
    expect(held).toBe('w1:1:1');
  });

  it('claims what is ready when the wait times out', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const control = connect();
    const backend = backendFor(name);
    // A job whose wake-up was taken by someone else: ready, with no marker left.
    const job = await queue.add('ready', {});
    await control.del(queueKeys(env.prefix, name).marker);
    const { claim, uncertain } = await backend.waitThenClaim!(50, { count: 1, lockMs: 30_000, tokenPrefix: 'w1:1:' });
    expect(uncertain).toBe(false);
    expect(claim?.jobs.map((j) => j.id)).toEqual([job.id]);
  });

  it('reports an interrupted wait as uncertain once its claim was sent', async () => {
    const name = env.queueName();
    const control = connect();
    const backend = backendFor(name);
    const pending = backend.waitThenClaim!(10_000, { count: 1, lockMs: 30_000, tokenPrefix: 'w1:1:' });
    await blockedWithClaimQueued(control);
    backend.interruptWait();
    expect(await pending).toEqual({ claim: undefined, uncertain: true });
  });

  it('a worker closing from its idle wait puts back a job claimed under its id that it does not know', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const control = connect();
    const job = await queue.add('orphan', {});
    const worker = env.worker(name, async () => 'never', { autorun: false });
    // A claim of this worker whose reply was lost, as the interrupted wait's claim may be.
    const other = backendFor(name);
    const { jobs } = await other.claim({ count: 1, lockMs: 30_000, tokenPrefix: `${worker.id}:99:` });
    expect(jobs.map((j) => j.id)).toEqual([job.id]);
    void worker.run();
    await blockedWithClaimQueued(control);
    await worker.close();
    expect(await queue.getJobState(job.id as string)).toBe('waiting');
    const stored = await queue.getJob(job.id as string);
    // Released as never started here: no stall counted, no attempt spent.
    expect(stored?.stalledCounter).toBe(0);
    expect(stored?.attemptsStarted).toBe(0);
  });

  it('a wake-up that reaches the wait connection a paused worker left claims nothing there: the job goes to its next wait', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const control = connect();
    // A long idle wait: the worker's next wait must be woken (the void claim passes the wake-up
    // on), not time out.
    const { worker, proxy } = await idleBehindLingerProxy(name, control, { drainDelay: 60 });
    await leaveAfterWalk(proxy, () => worker.pause());
    worker.resume();
    // The worker's next wait, beside the one it left (still blocked in Redis, first in line).
    await blockedWithClaimQueued(control, 2);
    const completed = nextCompleted(worker);
    const job = await queue.add('after-resume', {});
    expect(await completed).toBe(job.id);
    await expectStartedOnceWithoutStall(queue, job.id as string);
    proxy.release();
  });

  it('a wake-up that reaches the wait connection a closed worker left claims nothing there: another worker takes the job', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const control = connect();
    const { worker, proxy } = await idleBehindLingerProxy(name, control);
    await leaveAfterWalk(proxy, () => worker.close());
    // Closed, yet still blocked in Redis with its claim queued: the add wakes that connection.
    const job = await queue.add('after-close', {});
    await until(
      async () => !String(await control.call('CLIENT', 'LIST')).includes(' cmd=blpop '),
      'the left connection to be woken (its claim then ran)',
    );
    const other = env.worker(name, async () => 'taken', STALL_FAST);
    const completed = nextCompleted(other);
    expect(await completed).toBe(job.id);
    await expectStartedOnceWithoutStall(queue, job.id as string);
    proxy.release();
  });
});
