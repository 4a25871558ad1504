/**
 * BullMQ's QueueBase and helpers, as libraries built on BullMQ use them (bullmq-extra's Router
 * extends QueueBase and runs stream commands on `await this.client`): a subclass of QueueBase
 * with its own options, `client` and `waitUntilReady()` giving the ioredis client on Redis (a
 * BackendUnsupportedError on SQLite), `close()`, and `delay`; and `job.opts` as BullMQ shows a
 * loaded job's options (its Router forwards `job.opts` to other queues): the custom `jobId`, and
 * `attempts` 0 when none was given.
 */
import { describe, expect, it } from 'vitest';
import {
  BackendUnsupportedError,
  InvalidNameError,
  InvalidOptionsError,
  QueueBase,
  delay,
  type Job,
  type QueueBaseOptions,
} from '../../src/index.js';
import { TEST_BACKEND, useHopper } from '../helpers/hopper.js';

const env = useHopper();

interface StreamOptions extends QueueBaseOptions {
  /** An option of the subclass's own: the base leaves it alone. */
  maxLen?: number;
}

/** A library's class on QueueBase: writes and reads a stream of its own on the queue's connection. */
class StreamLog extends QueueBase {
  constructor(
    name: string,
    readonly streamOpts: StreamOptions,
  ) {
    super(name, { blockingConnection: false, ...streamOpts });
  }

  async write(entry: string): Promise<void> {
    const client = await this.client;
    await client.xadd(this.toKey('log'), 'MAXLEN', '~', this.streamOpts.maxLen ?? 1000, '*', 'entry', entry);
  }

  async length(): Promise<number> {
    const client = await this.client;
    return client.xlen(this.toKey('log'));
  }
}

describe('QueueBase, extended as in BullMQ', () => {
  it('gives a subclass the Redis client of its connection (SQLite: a typed refusal), and closes it', async () => {
    const log = env.track(new StreamLog(env.queueName('log'), { connection: env.url, prefix: env.prefix, maxLen: 10 }));
    expect(log.opts.prefix).toBe(env.prefix);
    const queue = env.queue(env.queueName());
    expect(queue).toBeInstanceOf(QueueBase);
    if (TEST_BACKEND === 'sqlite') {
      await expect(log.client).rejects.toBeInstanceOf(BackendUnsupportedError);
      expect(await log.waitUntilReady()).toBeUndefined();
      await expect(queue.client).rejects.toBeInstanceOf(BackendUnsupportedError);
    } else {
      const ready = await log.waitUntilReady();
      expect(await ready.ping()).toBe('PONG');
      await log.write('one');
      await log.write('two');
      expect(await log.length()).toBe(2);
      // A Queue is a QueueBase, with the same client.
      expect(await (await queue.client).ping()).toBe('PONG');
    }
    await log.close();
    await expect(log.client).rejects.toMatchObject({ code: 'ERR_HOPPER_CLOSED' });
  });

  it('checks the base options it knows before connecting', () => {
    expect(() => new StreamLog('log', { connection: env.url, prefix: 'a b' })).toThrow(InvalidNameError);
    expect(() => new StreamLog('log', { connection: env.url, skipVersionCheck: 'yes' as unknown as boolean })).toThrow(InvalidOptionsError);
    expect(() => new StreamLog('', { connection: env.url })).toThrow(InvalidNameError);
  });
});

describe('delay', () => {
  it('resolves after the time, or at once when aborted', async () => {
    const started = Date.now();
    await delay(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    const abort = new AbortController();
    const waiting = delay(60_000, abort);
    abort.abort();
    await expect(waiting).resolves.toBeUndefined();
    const aborted = new AbortController();
    aborted.abort();
    await expect(delay(60_000, aborted)).resolves.toBeUndefined();
  });

  it('refuses a time that is not a duration', () => {
    expect(() => delay(-1)).toThrow(InvalidOptionsError);
    expect(() => delay(Number.NaN)).toThrow(InvalidOptionsError);
    expect(() => delay(2 ** 31)).toThrow(InvalidOptionsError);
  });
});

describe('job.opts, as BullMQ shows a loaded job', () => {
  it('holds the custom jobId and attempts 0 by default, in a processor and from the getters', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('custom', { n: 1 }, { jobId: 'order-1' });
    await queue.add('auto', { n: 2 });
    await queue.add('tried', { n: 3 }, { jobId: 'order-3', attempts: 3 });
    const waiting = await queue.getWaiting();
    expect(waiting.map((job) => job.opts)).toEqual([{ jobId: 'order-1', attempts: 0 }, { attempts: 0 }, { jobId: 'order-3', attempts: 3 }]);
    const seen: Job['opts'][] = [];
    const worker = env.worker(name, async (job) => void seen.push(job.opts));
    await new Promise<void>((resolve) => worker.on('drained', resolve));
    expect(seen).toEqual([{ jobId: 'order-1', attempts: 0 }, { attempts: 0 }, { jobId: 'order-3', attempts: 3 }]);
    // Forwarding a job's options to another queue, as a router does, keeps its id.
    const target = env.queue(env.queueName());
    await target.add('copy', {}, waiting[0].opts);
    expect((await target.getJob('order-1'))?.opts).toEqual({ jobId: 'order-1', attempts: 0 });
  });
});
