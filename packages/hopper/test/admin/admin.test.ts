import { describe, expect, it } from 'vitest';
import { Admin, ClosedError, QueueNotFoundError } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('Admin', () => {
  it('lists the queues of its prefix with their counts, and the age of the oldest waiting job', async () => {
    const a = env.queueName('a');
    const b = env.queueName('b');
    await env.queue(a).addBulk([
      { name: 'x', data: {} },
      { name: 'y', data: {}, opts: { delay: 60_000 } },
    ]);
    await env.queue(b).pause();
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    expect(await admin.listQueues()).toEqual([a, b].sort());
    const [oa, ob] = await admin.overview([a, b]);
    expect(oa).toMatchObject({ name: a, paused: false, workers: 0, schedulers: 0 });
    expect(oa.counts).toEqual({ waiting: 1, prioritized: 0, delayed: 1, active: 0, 'waiting-children': 0, completed: 0, failed: 0 });
    expect(oa.oldestWaitingMs).toBeGreaterThanOrEqual(0);
    expect(ob).toMatchObject({ name: b, paused: true, oldestWaitingMs: null });
  });

  it('lists the prefixes that hold queues on the server, with how many queues each', async () => {
    await env.queue(env.queueName('a')).waitUntilReady();
    await env.queue(env.queueName('b')).waitUntilReady();
    const admin = env.track(new Admin({ connection: env.url, prefix: `${env.prefix}-none` }));
    const prefixes = await admin.listPrefixes();
    expect(prefixes).toContainEqual({ prefix: env.prefix, queues: 2 });
    expect(prefixes.map((p) => p.prefix)).not.toContain(`${env.prefix}-none`);
    expect(prefixes.map((p) => p.prefix)).toEqual([...prefixes.map((p) => p.prefix)].sort());
  });

  it('never creates a queue: an unknown name is refused with the names that exist', async () => {
    const a = env.queueName('a');
    await env.queue(a).add('x', {});
    const admin = env.track(new Admin({ connection: env.url, prefix: env.prefix }));
    const error = await admin.queue('typo').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueNotFoundError);
    expect((error as Error).message).toContain(`queues under it: ${a}`);
    expect(await admin.listQueues()).toEqual([a]);
    const queue = await admin.queue(a);
    expect(await queue.count()).toBe(1);
    expect(await admin.queue(a)).toBe(queue);
    await admin.close();
    await expect(admin.listQueues()).rejects.toBeInstanceOf(ClosedError);
  });
});
