/**
 * A repeated cancelJob on an active job tells its worker again (pub/sub only): a worker that
 * subscribed after the first message (or missed it) hears the repeat, while nothing is written or
 * emitted twice (test/cancel/sticky.test.ts checks that part).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper({ fakeClock: true });

describe('cancelJob on an active job already told', () => {
  it('publishes the cancel again, so a worker that missed the first message hears it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('long', {}, { jobId: 'x' });
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const { jobs } = await backend.claim({ count: 1, lockMs: 30_000, tokenPrefix: 'w:1:' }, env.clock!.backendNow());
    expect(jobs.map((j) => j.id)).toEqual(['x']);
    // The first cancel is published while nobody listens.
    expect(await queue.cancelJob('x', 'stop')).toBe('signalled');
    const subscriber = new Redis(env.url);
    try {
      const heard: string[] = [];
      subscriber.on('message', (_channel: string, message: string) => heard.push(message));
      await subscriber.subscribe(queueKeys(env.prefix, name).cancelChannel);
      expect(await queue.cancelJob('x', 'stop')).toBe('signalled');
      await until(async () => heard.length === 1, 'the repeated cancel to be published');
      expect(heard).toEqual(['x']);
    } finally {
      subscriber.disconnect();
    }
  });
});
