// Found by the fault suite (test/faults, row memory-pressure-locks): with Redis full under
// `maxmemory-policy noeviction`, Redis refused the lock renewal (OOM) like any write, so the locks
// of running jobs expired and the jobs ran twice. Renewal only rewrites existing locks and the
// worker's heartbeat, so it runs under OOM (script flag allow-oom), as do the writes that finish
// jobs and those that free memory (obliterate, drain, clean, remove). Adds stay refused, with a
// typed RedisFullError (before: a ScriptError carrying Redis's OOM reply).
import { describe, expect, it } from 'vitest';
import { ErrorCode, FakeClock, FlowProducer, HopperError, Queue, RedisFullError, ScriptError, Worker } from '../../src/index.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

/** Adds padding jobs until Redis refuses one (it is then over its maxmemory). */
async function fillUntilRefused(filler: Queue): Promise<void> {
  const pad = 'x'.repeat(8000);
  let refusal: unknown;
  for (let i = 0; i < 5000 && refusal === undefined; i++) {
    await filler.add('pad', { pad }).catch((err: unknown) => (refusal = err));
  }
  expect(refusal).toBeInstanceOf(RedisFullError);
}

/** A private Redis with a small maxmemory, a worker holding job `held`, and Redis then filled until it refuses an add. */
async function heldJobInFullRedis() {
  const server = await startRedisServer(['--maxmemory', '6mb', '--maxmemory-policy', 'noeviction']);
  env.track({ close: () => server.stop() });
  const clock = new FakeClock();
  const opts = { connection: server.url, prefix: env.prefix, clock };
  const name = env.queueName();
  const queue = env.track(new Queue(name, opts));
  const filler = env.track(new Queue(`${name}-fill`, opts));
  const started = signal();
  const release = signal();
  const processor = async () => {
    started.resolve();
    await release.promise;
    return 'done';
  };
  const worker = env.track(new Worker(name, processor, { ...opts, lockDuration: 1000, stalledInterval: 60_000 }));
  env.track({ close: async () => release.resolve() });
  await queue.add('held', {}, { jobId: 'held' });
  await started.promise;

  await fillUntilRefused(filler);
  return { clock, queue, filler, worker, release, opts };
}

describe('memory pressure (maxmemory with noeviction)', () => {
  it('keeps renewing the locks of running jobs while Redis refuses adds', async () => {
    const { clock, queue, filler, worker, release } = await heldJobInFullRedis();
    clock.advance(900);
    expect(await worker.lockRenewer.runOnce()).toEqual([]);
    clock.advance(600); // past the first deadline (1000), before the renewed one (1900)
    await filler.obliterate({ force: true }); // frees memory: allowed while full
    expect((await worker.stallRescuer.runOnce(true)).rescued).toEqual([]);

    const done = once(worker, 'completed');
    release.resolve();
    await done;
    expect(await (await queue.getJob('held'))?.getState()).toBe('completed');
  });

  it('records a completion while Redis refuses adds', async () => {
    const { queue, worker, release } = await heldJobInFullRedis();
    const done = once(worker, 'completed');
    release.resolve();
    await done;
    expect(await (await queue.getJob('held'))?.getState()).toBe('completed');
  });

  it('refuses add, addBulk and FlowProducer.add with a RedisFullError, writing nothing, and accepts them once there is room', async () => {
    const { queue, filler, opts } = await heldJobInFullRedis();
    const flows = env.track(new FlowProducer(opts));
    const flow = {
      name: 'parent',
      queueName: queue.name,
      opts: { jobId: 'p1' },
      children: [{ name: 'child', queueName: queue.name, opts: { jobId: 'c1' } }],
    };
    // Redis may free a little memory between calls (the worker's own writes settle): each call is
    // made right after Redis refused a padding add, so it is over its limit then; if Redis got back
    // under its limit in between (a dip of a few bytes), the call fits and is accepted: try again,
    // with fresh ids, until one is refused (the assertions below hold for the refused ones).
    const refusals: unknown[] = [];
    const refusedIds: string[] = [];
    async function refusedAfterFill(attemptAdd: (attempt: number) => { ids: string[]; add: Promise<unknown> }): Promise<void> {
      for (let attempt = 0; attempt < 5; attempt++) {
        await fillUntilRefused(filler);
        const { ids, add } = attemptAdd(attempt);
        const result = await add.catch((err: unknown) => err);
        if (result instanceof Error) {
          refusals.push(result);
          refusedIds.push(...ids);
          return;
        }
      }
      refusals.push(new Error('accepted 5 times in a row: Redis never stayed over its limit'));
    }
    await refusedAfterFill((i) => ({ ids: [`a-${i}`], add: queue.add('one', { pad: 'y'.repeat(8000) }, { jobId: `a-${i}` }) }));
    await refusedAfterFill((i) => ({
      ids: [`b-${i}`],
      add: queue.addBulk([{ name: 'bulk', data: { pad: 'y'.repeat(8000) }, opts: { jobId: `b-${i}` } }]),
    }));
    await refusedAfterFill((i) => {
      const ids = [`p-${i}`, `c-${i}`];
      const tried = { ...flow, opts: { jobId: ids[0] }, children: [{ ...flow.children[0], opts: { jobId: ids[1] } }] };
      return { ids, add: flows.add(tried) };
    });
    for (const err of refusals) {
      expect(err).toBeInstanceOf(RedisFullError);
      expect(err).toBeInstanceOf(HopperError);
      expect(err).not.toBeInstanceOf(ScriptError);
      expect((err as RedisFullError).code).toBe(ErrorCode.RedisFull);
      expect((err as Error).message).toMatch(/Redis is full .*nothing was written/);
      expect(String((err as Error).cause)).toMatch(/OOM command not allowed/);
    }
    expect(refusals).toHaveLength(3);
    for (const id of refusedIds) expect(await queue.getJob(id)).toBeUndefined();

    await filler.obliterate({ force: true });
    expect((await queue.add('one', {}, { jobId: 'a1' })).id).toBe('a1');
    expect((await queue.addBulk([{ name: 'bulk', data: {}, opts: { jobId: 'b1' } }]))[0].id).toBe('b1');
    expect((await flows.add(flow)).job.id).toBe('p1');
  });
});
