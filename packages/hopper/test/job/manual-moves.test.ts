import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('manual moves (BullMQ getNextJob flow)', () => {
  it("token '0' names the token the Job was taken with, never another holder's", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('a', {}, { removeOnFail: false });
    await queue.add('b', {});
    const worker = env.worker(name, null, { autorun: false });
    const taken = await worker.getNextJob('my-token');
    await taken!.moveToFailed(new Error('boom'), '0');
    expect(await taken!.getState()).toBe('failed');
    // A Job read back (not taken) has no token of its own: '0' does not unlock another holder's job.
    const held = await worker.getNextJob('holder');
    const fetched = await queue.getJob(held!.id as string);
    await expect(fetched!.moveToCompleted('x', '0')).rejects.toBeInstanceOf(LockLostError);
    expect(await held!.getState()).toBe('active');
  });

  it("a job that is not active is refused with BullMQ's key phrase", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('a', {}, { attempts: 3 });
    const failing = job.moveToFailed(new Error('x'), '0', true);
    await expect(failing).rejects.toBeInstanceOf(LockLostError);
    await expect(failing).rejects.toThrow(`Job ${job.id} is not in the active state. retryJob`);
    await expect(job.moveToCompleted('x', 'tok')).rejects.toThrow(`Job ${job.id} is not in the active state. moveToFinished`);
    expect(await job.getState()).toBe('waiting');
  });

  it("fetchNext takes the next job after a delayed retry and returns it in BullMQ's shape", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('a', {}, { attempts: 3, backoff: 300 });
    const next = await queue.add('b', { n: 2 });
    const worker = env.worker(name, null, { autorun: false });
    const job = await worker.getNextJob('t');
    const reply = await job!.moveToFailed(new Error('first'), 't', true);
    expect(await job!.getState()).toBe('delayed');
    expect(job!.stacktrace).toHaveLength(1);
    expect(reply[1]).toBe(next.id);
    expect(reply[0]).toMatchObject({ name: 'b', data: '{"n":2}' });
    expect(reply.slice(2)).toEqual([0, 0]);
    expect(await reply.job!.getState()).toBe('active');
    expect(await reply.job!.moveToCompleted('done', 't')).toEqual([]);
  });

  it('fetchNext takes nothing after an immediate retry (it would take the same job back)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('a', {}, { attempts: 2, stackTraceLimit: 1 });
    const worker = env.worker(name, null, { autorun: false });
    const job = await worker.getNextJob('t');
    expect(await job!.moveToFailed(new Error('once'), 't', true)).toEqual([]);
    expect(await job!.getState()).toBe('waiting');
    const again = await worker.getNextJob('t');
    expect(again?.id).toBe(job!.id);
    await again!.moveToFailed(new Error('twice'), 't', true);
    expect(await again!.getState()).toBe('failed');
    expect(again!.stacktrace).toHaveLength(1);
    expect(again!.stacktrace[0]).toContain('twice');
    expect((await queue.getJob(job!.id as string))?.stacktrace).toEqual(again!.stacktrace);
  });
});
