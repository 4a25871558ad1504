import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/index.js';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('start-up checks and bad input', () => {
  it('accepts delays beyond 2^31-1 ms without one long timer', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('far', {}, { delay: 2 ** 31 + 10_000 });
    // The worker's first claim finds only the far delayed job: it drains, arming a capped timer.
    const worker = env.worker(name, async () => 'never', { autorun: false });
    const drained = once(worker, 'drained');
    void worker.run();
    await drained;
    expect(await job.getState()).toBe('delayed');
    expect(job.delay).toBe(2 ** 31 + 10_000);
  });

  it('refuses unknown backoff types at add, and accepts declared ones', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { backoff: { type: 'linaer' } })).rejects.toThrow(/Unknown backoff type "linaer"/);
    await expect(queue.add('x', {}, { backoff: { type: 'linaer' } })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.add('x', {}, { backoff: { type: 'custom' } })).resolves.toBeDefined();
    const declared = env.queue(env.queueName(), { backoffTypes: ['linear'] });
    await expect(declared.add('x', {}, { backoff: { type: 'linear', delay: 5 } })).resolves.toBeDefined();
    expect(() => env.queue(env.queueName(), { defaultJobOptions: { backoff: { type: 'nope' } } })).toThrow(InvalidOptionsError);
  });
});
