// Issue 34: bad input gets a typed error that names the option, the value and what is accepted,
// and changes nothing (checked before any write or connection). One test per reported case, on
// both backends (this file is in SQLITE_TEST_FILES).
import { describe, expect, it } from 'vitest';
import {
  FlowProducer,
  InvalidDataError,
  InvalidJobIdError,
  InvalidNameError,
  InvalidOptionsError,
  InvalidScheduleError,
  Queue,
  QueueEvents,
  UnsupportedOptionError,
  Worker,
  nextFireTimes,
  type Job,
  type JobsOptions,
  type WorkerOptions,
} from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

/** Every state of the queue is empty: the refused call wrote nothing. */
async function expectEmpty(queue: Queue): Promise<void> {
  const counts = await queue.getJobCounts();
  expect(
    Object.values(counts).every((n) => n === 0),
    JSON.stringify(counts),
  ).toBe(true);
}

const BAD_RETENTIONS: unknown[] = [
  1.5,
  Number.NaN,
  { count: 1.5 },
  { age: 'x' },
  { age: 1e18 },
  '100',
  Number.MAX_SAFE_INTEGER,
  { age: 0.0005 },
  {},
  { count: 1, agee: 5 },
];

describe('one validation layer: typed errors naming the option, nothing written', () => {
  it('refuses unknown options with the closest name, at the top and nested (a group or dead-letter route is never dropped)', async () => {
    const queue = env.queue(env.queueName());
    const typo = queue.add('x', {}, { atempts: 3 } as JobsOptions);
    await expect(typo).rejects.toThrow(InvalidOptionsError);
    await expect(typo).rejects.toThrow("did you mean 'attempts'");
    const nested = await queue.add('x', {}, { group: { id: 'g', maxsize: 3 } } as unknown as JobsOptions).catch((err: unknown) => err);
    expect(nested).toBeInstanceOf(InvalidOptionsError);
    expect((nested as InvalidOptionsError).option).toBe('group.maxsize');
    await expect(queue.add('x', {}, { deadLetter: { queue: 'dlq', x: 1 } } as unknown as JobsOptions)).rejects.toThrow(/deadLetter\.x/);
    await expectEmpty(queue);
    expect(() => new Queue(env.queueName(), { connection: env.url, prefix: env.prefix, defaultJobOption: {} } as object)).toThrow(
      "did you mean 'defaultJobOptions'",
    );
    expect(() => new Worker(env.queueName(), null, { connection: env.url, prefix: env.prefix, concurency: 2 } as object)).toThrow(
      "did you mean 'concurrency'",
    );
  });

  it("leaves a component option alone when it is no typo of a known one (a library's own setting, as BullMQ does)", async () => {
    // bullmq-extra's Router passes its options, optsOverride among them, to a Worker and a Queue.
    const own = { optsOverride: (data: unknown) => ({ data }), batchSize: 10 };
    const name = env.queueName();
    // Left alone, but not silently: a warning names each, the first time a component meets it.
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === 'HOPPER_UNKNOWN_OPTION') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    const worker = env.worker(name, async () => 'ok', own as object);
    const queue = env.queue(name, own as object);
    const done = new Promise<unknown>((resolve) => worker.on('completed', (_job, result) => resolve(result)));
    await queue.add('x', {});
    expect(await done).toBe('ok');
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    process.off('warning', onWarning);
    expect(warnings).toContain(
      "Worker option 'optsOverride' is not one Hopper knows: it is ignored (as BullMQ ignores it). If it is meant as one of Hopper's, check its name in docs/api.md.",
    );
    expect(warnings.some((w) => w.startsWith("Queue option 'batchSize'"))).toBe(true);
    // Job options stay strict.
    await expect(queue.add('x', {}, own as JobsOptions)).rejects.toThrow(/Unknown option optsOverride/);
  });

  it('refuses a typo in setGlobalRateLimit options instead of setting a job-count limit', async () => {
    const queue = env.queue(env.queueName());
    const err = await queue.setGlobalRateLimit(10, 1000, { weigthed: true } as unknown as { weighted: boolean }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionsError);
    expect((err as Error).message).toContain("did you mean 'weighted'");
    expect(await queue.getGlobalRateLimit()).toBeNull();
  });

  it('refuses bad removeOnComplete / removeOnFail values on a job and on a Worker', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    for (const value of BAD_RETENTIONS) {
      for (const option of ['removeOnComplete', 'removeOnFail'] as const) {
        const err = await queue.add('x', {}, { [option]: value }).catch((e: unknown) => e);
        expect(err, `${option}: ${JSON.stringify(value)}`).toBeInstanceOf(InvalidOptionsError);
        expect((err as InvalidOptionsError).option).toMatch(new RegExp(`^${option}`));
        expect(() => new Worker(name, null, { connection: env.url, prefix: env.prefix, [option]: value })).toThrow(InvalidOptionsError);
      }
    }
    await expectEmpty(queue);
    // The accepted forms still work, and their jobs complete (with the retention applied).
    await queue.add('x', {}, { removeOnComplete: { age: 1.5, count: 10 }, removeOnFail: 100 });
    const worker = env.worker(name, async () => 'ok', { removeOnComplete: { age: 3600 }, removeOnFail: { count: 5 } });
    await once(worker, 'completed');
  });

  it('refuses backoff: 1e308 and a backoffStrategy that is not a function', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await expect(queue.add('x', {}, { backoff: 1e308 })).rejects.toThrow(InvalidOptionsError);
    await expect(queue.add('x', {}, { backoff: { type: 'fixed', delay: Infinity } })).rejects.toThrow(InvalidOptionsError);
    await expectEmpty(queue);
    const settings = { backoffStrategy: 42 } as unknown as WorkerOptions['settings'];
    expect(() => new Worker(name, async () => 'ok', { connection: env.url, prefix: env.prefix, settings })).toThrow(
      /settings\.backoffStrategy/,
    );
  });

  it('checks a FlowProducer queuesOptions.defaultJobOptions and node options before writing anything', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const flows = env.flows();
    const tree = { name: 'root', queueName: name, children: [{ name: 'child', queueName: name }] };
    for (const defaults of [{ delay: -5 }, { attempts: -1 }, { lifo: 'yes' }, { group: { id: '' } }, { delay: 'abc' }]) {
      const err = await flows
        .add(tree, { queuesOptions: { [name]: { defaultJobOptions: defaults as JobsOptions } } })
        .catch((e: unknown) => e);
      expect(err, JSON.stringify(defaults)).toBeInstanceOf(InvalidOptionsError);
    }
    const badChild = { ...tree, children: [{ name: 'child', queueName: name, opts: { delay: 'abc' } as unknown as JobsOptions }] };
    const err = await flows.add(badChild).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionsError);
    expect((err as InvalidOptionsError).option).toBe('flow.children[0].opts.delay');
    await expect(flows.add({ ...tree, colour: 'red' } as typeof tree)).rejects.toThrow(/flow\.colour/);
    await expectEmpty(queue);
  });

  it('refuses a connection that is not one (a number, true) and sqlite: URLs that would mean something else', () => {
    const opts = { prefix: env.prefix };
    for (const connection of [42, true, 'localhost:6379', 'SQLite:./x.db', 'sqlite:./x.db?mode=ro', 'sqlite://x.db', 'sqlite:']) {
      expect(() => new Queue(env.queueName(), { ...opts, connection } as object), String(connection)).toThrow(InvalidOptionsError);
    }
    expect(() => new Queue(env.queueName(), { ...opts, connection: { host: 'localhost', db: -1 } })).toThrow(/connection\.db/);
    expect(() => new FlowProducer({ ...opts, connection: true } as object)).toThrow(InvalidOptionsError);
  });

  it('refuses maxTurns and maxCost that would remove a run guard, before writing a turn', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('turn', {}, { jobId: 'conv' });
    const worker = env.worker(name, null);
    const job = (await worker.getNextJob('tok')) as Job;
    for (const opts of [{ maxTurns: Number.NaN }, { maxTurns: 'x' }, { maxTurns: 0 }, { maxCost: -1 }, { maxTurn: 3 }]) {
      await expect(job.continueWith({}, opts as object), JSON.stringify(opts)).rejects.toThrow(InvalidOptionsError);
    }
    expect(await queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 0, active: 1 });
    await job.moveToCompleted('done', 'tok');
  });

  it('refuses durations a timer cannot wait (2^31 ms or more) and nonsense ones', async () => {
    const name = env.queueName();
    const base = { connection: env.url, prefix: env.prefix };
    for (const opts of [
      { closeTimeout: 2 ** 31 },
      { lockDuration: 2 ** 31 },
      { stalledInterval: Infinity },
      { drainDelay: Infinity },
      { drainDelay: 1e12 },
      { eventsMaxAge: 'abc' },
      { lockDuration: 1000, lockRenewTime: 1000 },
      { lockRenewTime: 40_000 },
      { maximumRateLimitDelay: 2 ** 31 },
    ]) {
      expect(() => new Worker(name, null, { ...base, ...opts } as WorkerOptions), JSON.stringify(opts)).toThrow(InvalidOptionsError);
    }
    const queue = env.queue(name);
    await expect(queue.add('x', {}, { timeout: 2 ** 31 })).rejects.toThrow(InvalidOptionsError);
    const job = await queue.add('x', {});
    const events = env.events(name);
    // A ttl past 2^31 ms is chained (test/lifecycle/long-timers.test.ts); an infinite or negative one is nonsense.
    await expect(job.waitUntilFinished(events, Infinity)).rejects.toThrow(InvalidOptionsError);
    await expect(job.waitUntilFinished(events, -1)).rejects.toThrow(InvalidOptionsError);
    await expect(job.waitUntilFinished(events, Number.NaN)).rejects.toThrow(InvalidOptionsError);
    expect(() => new QueueEvents(name, { ...base, blockingTimeout: 2 ** 31 })).toThrow(InvalidOptionsError);
  });

  it('refuses extendLock(-1) and extendLock(NaN), keeping the lock', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const worker = env.worker(name, null);
    const job = (await worker.getNextJob('tok')) as Job;
    for (const duration of [-1, Number.NaN, 0, 2 ** 31, '100']) {
      await expect(job.extendLock('tok', duration as number), String(duration)).rejects.toThrow(InvalidOptionsError);
    }
    expect(await job.extendLock('tok', 5000)).toBe(1);
    await job.moveToCompleted('ok', 'tok');
  });

  it('refuses unknown states, bad flow reads, bad schedule specs and bad bulk entries', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await expect(queue.getJobCounts('bogus' as 'waiting')).rejects.toThrow(InvalidOptionsError);
    await expect(queue.getJobCountByTypes('constructor' as 'waiting')).rejects.toThrow(InvalidOptionsError);
    const flows = env.flows();
    await flows.add({
      name: 'p',
      queueName: name,
      opts: { jobId: 'p' },
      children: [
        { name: 'a', queueName: name },
        { name: 'b', queueName: name },
      ],
    });
    await expect(flows.getFlow({ queueName: name, id: 'p', maxChildren: -1 })).rejects.toThrow(InvalidOptionsError);
    expect((await flows.getFlow({ queueName: name, id: 'p', maxChildren: 2 }))?.children).toHaveLength(2);
    for (const every of [0, -5]) {
      expect(() => nextFireTimes({ kind: 'every', every, offset: 0 } as never, { from: 0, count: 3 })).toThrow(InvalidScheduleError);
    }
    const before = await queue.getJobCounts();
    await expect(queue.addBulk([null] as never)).rejects.toThrow(InvalidOptionsError);
    await expect(
      queue.addBulk([
        { name: 'ok', data: {} },
        { name: 'x', data: {}, opts: { delay: -1 } },
      ]),
    ).rejects.toThrow(InvalidOptionsError);
    expect(await queue.getJobCounts()).toEqual(before);
    const job = await queue.add('x', {}, { delay: 60_000 });
    await expect(job.changePriority(null as never)).rejects.toThrow(InvalidOptionsError);
    await expect(job.changePriority({ priority: 1, lifo: 'yes' } as never)).rejects.toThrow(InvalidOptionsError);
    await expect(queue.readStream(job.id as string, { from: '99999999999999999999999-0' }).next()).rejects.toThrow(InvalidDataError);
    // Found by the fuzzer: a BigInt in a refused value made the refusal's own message throw a raw TypeError.
    await expect(queue.upsertJobScheduler(10n as never, { every: 1000 })).rejects.toThrow(InvalidOptionsError);
  });

  it('refuses ids made of lone surrogates (they would collide) and prefixes that overlap other keys', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { jobId: 'a\uD800' })).rejects.toThrow(InvalidJobIdError);
    await expect(queue.add('x', {}, { group: { id: '\uDC00' } })).rejects.toThrow(InvalidOptionsError);
    await expect(queue.add('x\uD800', {})).rejects.toThrow(InvalidNameError);
    await expectEmpty(queue);
    // A well-formed pair is fine.
    expect((await queue.add('x', {}, { jobId: 'a\uD83D\uDE00' })).id).toBe('a\uD83D\uDE00');
    for (const prefix of ['a:{b}', 'a{b}', 'a:', ':a', 'a::b', '{a}:b', '{a', 'a}', '{}', 'a*', 'a b']) {
      expect(() => new Queue('q', { connection: env.url, prefix }), prefix).toThrow(InvalidNameError);
    }
    for (const prefix of ['app', 'app:jobs', '{app}']) {
      const ok = env.track(
        new Queue(env.queueName(), { connection: env.url, prefix: `${prefix}${prefix.endsWith('}') ? '' : env.prefix}` }),
      );
      await ok.waitUntilReady();
    }
  });

  it('never retries an active job (retryJobs, job.retry), nor takes a state name as a key', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    let runs = 0;
    const started = signal();
    const release = signal();
    const worker = env.worker(
      name,
      async () => {
        runs++;
        started.resolve();
        await release.promise;
        return 'ok';
      },
      { concurrency: 5 },
    );
    const job = await queue.add('x', {});
    await started.promise;
    for (const state of ['active', 'constructor', 'meta', 'bogus']) {
      await expect(queue.retryJobs({ state } as never), state).rejects.toThrow(InvalidOptionsError);
      await expect(job.retry(state as never), state).rejects.toThrow(InvalidOptionsError);
    }
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 1, waiting: 0 });
    const done = once(worker, 'completed');
    release.resolve();
    await done;
    expect(runs).toBe(1);
  });

  it('a constructor refused for a bad option opens no connection (the process can exit)', async () => {
    // Validation runs before the backend is created: nothing is opened to be left behind.
    const base = { connection: env.url, prefix: env.prefix };
    expect(() => new Worker(env.queueName(), async () => 'ok', { ...base, concurrency: 0 })).toThrow(InvalidOptionsError);
    expect(() => new Queue(env.queueName(), { ...base, defaultJobOptions: { attempts: -1 } })).toThrow(InvalidOptionsError);
    expect(() => new Worker(env.queueName(), 42 as never, base)).toThrow(InvalidOptionsError);
    expect(() => new Worker(env.queueName(), '/nowhere/processor.js', { ...base, sandbox: { minChildren: 2 } })).toThrow(/minChildren/);
    expect(() => new Worker(env.queueName(), new URL('https://example.com/p.js'), base)).toThrow(InvalidOptionsError);
    expect(() => new Worker(env.queueName(), null, { ...base, skipLockRenewal: true } as WorkerOptions)).toThrow(UnsupportedOptionError);
  });

  it('500 waitUntilFinished on one QueueEvents print no MaxListenersExceededWarning', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const events = env.events(name);
    await events.waitUntilReady();
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w);
    };
    process.on('warning', onWarning);
    try {
      const jobs = await queue.addBulk(Array.from({ length: 500 }, (_, i) => ({ name: 'x', data: { i } })));
      const waits = jobs.map((job) => job.waitUntilFinished(events, 30_000));
      env.worker(name, async (job) => (job.data as { i: number }).i, { concurrency: 50 });
      const results = await Promise.all(waits);
      expect(results).toEqual(jobs.map((_, i) => i));
      expect(events.listenerCount('completed')).toBe(0);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
