/**
 * A re-sent triggerJobScheduler (issue 12): ioredis re-sends a command whose reply was lost. The
 * trigger ran, its reply was lost, the re-sent call must not run the scheduler a second time.
 * Real clock: with Redis TIME the re-sent call runs a few ms later than the first. Redis-backend
 * specific (the proxy holds a call by its function name).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LIBRARY, SCRIPTS } from '../../src/backend/redis/scripts.generated.js';
import { Queue } from '../../src/index.js';
import { CutProxy } from '../helpers/cut-proxy.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper();

async function withProxy(): Promise<CutProxy> {
  const url = new URL(env.url);
  const admin = new Redis(env.url);
  // The library loaded beforehand: the first call is the FCALL (no load round trip for the proxy to hold).
  await admin.call('FUNCTION', 'LOAD', LIBRARY.source).catch((err: Error) => {
    if (!/already exists/.test(err.message)) throw err;
  });
  admin.disconnect();
  return env.track(await CutProxy.start(Number(url.port)));
}

describe('a re-sent triggerJobScheduler', () => {
  it('whose reply was lost runs the scheduler once, and returns that run', async () => {
    const proxy = await withProxy();
    const name = env.queueName();
    const queue = env.track(new Queue(name, { connection: { host: '127.0.0.1', port: proxy.port }, prefix: env.prefix }));
    const observer = env.queue(name);
    await queue.upsertJobScheduler('s', { pattern: '0 3 * * *' }, { name: 'tick' });
    const held = proxy.arm(SCRIPTS.runScheduled.fn);
    const triggering = queue.triggerJobScheduler('s');
    await held;
    await until(async () => (await observer.getJobCounts('waiting')).waiting === 1, 'the trigger to run');
    proxy.cut();
    const job = await triggering;
    const waiting = await observer.getJobs(['waiting']);
    expect(waiting.map((j) => j.id)).toEqual([job?.id]);
    expect((await observer.getJobSchedulerState('s'))?.fired).toBe(1);
    // A new call is a new trigger.
    const again = await queue.triggerJobScheduler('s');
    expect(again?.id).not.toBe(job?.id);
    expect(await observer.getJobCounts('waiting')).toEqual({ waiting: 2 });
  });
});
