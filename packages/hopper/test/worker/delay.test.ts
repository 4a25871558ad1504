import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('worker.delay (BullMQ)', () => {
  it('waits the given time, ends early when its AbortController aborts, and refuses a bad duration', async () => {
    const worker = env.worker(env.queueName(), null, { autorun: false });
    const started = performance.now();
    await worker.delay(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);

    const controller = new AbortController();
    const waiting = worker.delay(60_000, controller);
    controller.abort();
    await waiting; // resolves at once instead of after a minute

    const aborted = new AbortController();
    aborted.abort();
    await worker.delay(60_000, aborted);
    expect(() => worker.delay(-1)).toThrow(InvalidOptionsError);
  });
});
