/**
 * A processor can throw anything and return anything: every job ends (failed with a readable
 * reason, or completed), the worker keeps its slots, and close() returns. A value that cannot be
 * shown (a BigInt, a cycle, a getter that throws, a Symbol, null) and an Error whose own
 * `message` or `stack` getter throws are recorded with a reason that says what was thrown. Event
 * listeners that throw do not strand a job or a slot either.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/sandbox/${name}`, import.meta.url));

function circular(): object {
  const value: { self?: unknown; n: number } = { n: 1 };
  value.self = value;
  return value;
}

function throwingGetter(): object {
  return Object.defineProperty({}, 'boom', {
    enumerable: true,
    get() {
      throw new Error('getter threw');
    },
  });
}

/** No prototype (String() of it throws) and no JSON form (a BigInt). */
function nullPrototype(): object {
  return Object.assign(Object.create(null) as object, { n: 10n });
}

function errorWithThrowingMessage(): Error {
  const err = new Error('hidden');
  Object.defineProperty(err, 'message', {
    get() {
      throw new Error('message getter threw');
    },
  });
  return err;
}

function errorWithThrowingStack(): Error {
  const err = new Error('visible message');
  Object.defineProperty(err, 'stack', {
    get() {
      throw new Error('stack getter threw');
    },
  });
  return err;
}

/** Thrown values, each with what its job's failedReason must say. */
const THROWN: [string, () => unknown, RegExp][] = [
  ['a BigInt', () => 10n, /non-Error value[a-z ]*: 10n/],
  ['a circular object', circular, /non-Error value[a-z ]*: .*\[Circular \*1\]/],
  ['an object with a throwing getter', throwingGetter, /non-Error value[a-z ]*: .*boom/],
  ['null', () => null, /non-Error value[a-z ]*: null/],
  ['undefined', () => undefined, /non-Error value[a-z ]*: undefined/],
  ['a Symbol', () => Symbol('sym'), /non-Error value[a-z ]*: Symbol\(sym\)/],
  ['an object without a prototype holding a BigInt', nullPrototype, /non-Error value[a-z ]*: \[Object: null prototype\] \{ n: 10n \}/],
  ['an Error whose message getter throws', errorWithThrowingMessage, /message could not be read/],
  ['an Error whose stack getter throws', errorWithThrowingStack, /^visible message$/],
  ['a string', () => 'plain words', /^plain words$/],
];

describe('a processor that throws anything', () => {
  for (const [what, make, reason] of THROWN) {
    it(`fails the job when it throws ${what}, keeps the slot, and closes`, async () => {
      const name = env.queueName();
      const queue = env.queue(name);
      const bad = await queue.add('bad', {}, { removeOnFail: false });
      const good = await queue.add('good', {}, { removeOnComplete: false });
      const worker = env.worker(
        name,
        async (job: Job) => {
          if (job.name === 'bad') throw make();
          return 'ok';
        },
        { concurrency: 1 },
      );
      // One slot: the next job runs only if the bad one freed it.
      await once(worker, 'completed', (job: Job) => job.id === good.id, 20_000);
      const stored = await queue.getJob(bad.id as string);
      expect(await stored?.getState()).toBe('failed');
      expect(stored?.failedReason).toMatch(reason);
      await worker.close();
    });
  }

  it('fails a job whose processor throws synchronously (not async) a BigInt', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const bad = await queue.add('bad', {}, { removeOnFail: false });
    const worker = env.worker(name, () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the value under test
      throw 10n;
    });
    await once(worker, 'failed');
    expect((await queue.getJob(bad.id as string))?.failedReason).toMatch(/non-Error value[a-z ]*: 10n/);
    await worker.close();
  });

  it('retries a job that threw a non-Error value, then fails it with the reason', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const bad = await queue.add('bad', {}, { attempts: 2, removeOnFail: false });
    let runs = 0;
    const worker = env.worker(name, () => {
      runs++;
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the value under test
      return Promise.reject(circular());
    });
    await once(worker, 'failed', (job: Job) => job.attemptsMade === 2, 20_000);
    expect(runs).toBe(2);
    expect((await queue.getJob(bad.id as string))?.failedReason).toMatch(/non-Error value/);
  });

  for (const [what, value] of [
    ['a BigInt', () => 10n],
    ['a circular object', circular],
    ['an object with a throwing getter', throwingGetter],
  ] as const) {
    it(`fails the job when it returns ${what}, keeps the slot`, async () => {
      const name = env.queueName();
      const queue = env.queue(name);
      const bad = await queue.add('bad', {}, { removeOnFail: false });
      const good = await queue.add('good', {}, { removeOnComplete: false });
      const worker = env.worker(name, async (job: Job) => (job.name === 'bad' ? value() : 'ok'), { concurrency: 1 });
      await once(worker, 'completed', (job: Job) => job.id === good.id, 20_000);
      const stored = await queue.getJob(bad.id as string);
      expect(await stored?.getState()).toBe('failed');
      expect(stored?.failedReason).toMatch(/return value/i);
    });
  }

  for (const event of ['active', 'completed', 'failed'] as const) {
    it(`records every job and keeps its slot when a '${event}' listener throws`, async () => {
      env.expectErrors(/listener threw on purpose/);
      const name = env.queueName();
      const queue = env.queue(name);
      const jobs = await queue.addBulk(
        [0, 1, 2].map((i) => ({ name: 'j', data: { i }, opts: { removeOnComplete: false, removeOnFail: false } })),
      );
      const worker = env.worker(
        name,
        async (job: Job<{ i: number }>) => {
          if (event === 'failed') throw new Error(`fail ${job.data.i}`);
          return job.data.i;
        },
        { concurrency: 1, autorun: false },
      );
      const final = event === 'failed' ? 'failed' : 'completed';
      // Registered first: it hears each job's event before the throwing listener.
      let ended = 0;
      let errors = 0;
      const done = signal();
      const check = (): void => {
        if (ended === 3 && errors === 3) done.resolve();
      };
      worker.on(final, () => {
        ended++;
        check();
      });
      worker.on(event, () => {
        throw new Error('listener threw on purpose');
      });
      worker.on('error', () => {
        errors++;
        check();
      });
      void worker.run();
      await done.promise;
      for (const job of jobs) {
        const stored = await queue.getJob(job.id as string);
        expect(await stored?.getState()).toBe(final);
      }
      await worker.close();
    });
  }
});

describe('a sandboxed processor that throws anything', () => {
  for (const useWorkerThreads of [false, true]) {
    it(`fails each job with a readable reason and keeps the slot (${useWorkerThreads ? 'threads' : 'processes'})`, async () => {
      const name = env.queueName();
      const queue = env.queue(name);
      const kinds = ['bigint', 'circular', 'getter', 'null', 'undefined', 'symbol', 'message-getter', 'stack-getter', 'no-prototype'];
      const jobs = await queue.addBulk(kinds.map((kind) => ({ name: kind, data: { kind }, opts: { removeOnFail: false } })));
      const good = await queue.add('good', { kind: 'none' }, { removeOnComplete: false });
      const worker = env.worker(name, fixture('throw-anything.mjs'), { useWorkerThreads, concurrency: 1 });
      await once(worker, 'completed', (job: Job) => job.id === good.id, 30_000);
      const reasons: Record<string, string | undefined> = {};
      for (const job of jobs) {
        const stored = await queue.getJob(job.id as string);
        expect(await stored?.getState()).toBe('failed');
        reasons[job.name] = stored?.failedReason;
      }
      expect(reasons.bigint).toMatch(/non-Error value[a-z ]*: 10n/);
      expect(reasons.circular).toMatch(/non-Error value[a-z ]*: .*Circular/);
      expect(reasons.getter).toMatch(/non-Error value[a-z ]*: .*boom/);
      expect(reasons.null).toMatch(/non-Error value[a-z ]*: null/);
      expect(reasons.undefined).toMatch(/non-Error value[a-z ]*: undefined/);
      expect(reasons.symbol).toMatch(/non-Error value[a-z ]*: Symbol\(sym\)/);
      expect(reasons['message-getter']).toMatch(/message could not be read/);
      expect(reasons['stack-getter']).toBe('visible message');
      expect(reasons['no-prototype']).toMatch(/non-Error value[a-z ]*: \[Object: null prototype\] \{ n: 10n \}/);
      await worker.close();
    });
  }
});
