/**
 * The module's registration options as @nestjs/bullmq defines them: a flow producer keeps its
 * name, async registrations without a factory take the forRoot configuration, the queue option
 * `processors` (functions, options, sandboxed files) and the options refused before anything opens.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { InvalidOptionsError, UnsupportedOptionError, type FlowProducer, type Job, type Queue } from 'hopper-queue';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { BullModule, getFlowProducerToken, getQueueOptionsToken, getQueueToken, type RegisterQueueOptions } from '../src/index.js';

const env = useHopper();
const apps: TestingModule[] = [];

async function start(imports: Parameters<typeof Test.createTestingModule>[0]['imports']): Promise<TestingModule> {
  const app = await Test.createTestingModule({ imports }).compile();
  apps.push(app);
  await app.init();
  return app;
}

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** Adds a job and waits (5 s at most) for its result. */
async function processed(queue: Queue, data: unknown = {}): Promise<unknown> {
  const events = env.events(queue.name);
  await events.waitUntilReady();
  const job = await queue.add('job', data);
  return job.waitUntilFinished(events, 5_000);
}

const connection = () => ({ connection: env.url, prefix: env.prefix });

describe('flow producers keep their name', () => {
  it('registerFlowProducer, with or without forRoot, and registerFlowProducerAsync', async () => {
    const app = await start([
      BullModule.forRoot(connection()),
      BullModule.registerFlowProducer({ name: 'plain', ...connection() }, { name: 'shared' }),
      BullModule.registerFlowProducerAsync({ name: 'made', useFactory: () => connection() }, { name: 'fallback' }),
    ]);
    for (const name of ['plain', 'shared', 'made', 'fallback']) {
      const producer = app.get<FlowProducer>(getFlowProducerToken(name));
      expect((producer.opts as { name?: string }).name).toBe(name);
      expect(producer.prefix).toBe(env.prefix);
    }
    // And they work: a flow added through the one without a factory lands under forRoot's prefix.
    const queueName = env.queueName('flow');
    const node = await app.get<FlowProducer>(getFlowProducerToken('fallback')).add({ name: 'parent', queueName, data: {} });
    expect(await env.queue(queueName).getJobState(String(node.job.id))).toBe('waiting');
  });
});

describe('registerQueueAsync without a factory', () => {
  it("takes forRoot's configuration, beside registerQueue", async () => {
    const q1 = env.queueName('async');
    const q2 = env.queueName('sync');
    const app = await start([
      BullModule.forRootAsync({ useFactory: () => ({ ...connection(), defaultJobOptions: { attempts: 7 } }) }),
      BullModule.registerQueueAsync({ name: q1 }),
      BullModule.registerQueue({ name: q2 }),
    ]);
    for (const name of [q1, q2]) {
      const queue = app.get<Queue>(getQueueToken(name));
      expect(queue.name).toBe(name);
      const job = await queue.add('x', {});
      expect(job.opts.attempts).toBe(7);
      expect(await env.queue(name).getJobState(String(job.id))).toBe('waiting');
    }
    // The queue's options, as @nestjs/bullmq provides them (forRoot's merged with the registration's).
    expect(app.get<RegisterQueueOptions>(getQueueOptionsToken(q1))).toMatchObject({
      prefix: env.prefix,
      defaultJobOptions: { attempts: 7 },
    });
  });

  it('takes a configKey', async () => {
    const name = env.queueName('keyed');
    const app = await start([
      BullModule.forRoot('other', { ...connection(), defaultJobOptions: { priority: 3 } }),
      BullModule.registerQueueAsync({ name, configKey: 'other' }),
    ]);
    expect((await app.get<Queue>(getQueueToken(name)).add('x', {})).opts.priority).toBe(3);
  });
});

describe('options classes (useClass, useExisting) with @nestjs/bullmq method names', () => {
  it('createSharedConfiguration, createRegisterQueueOptions, and an existing provider for a flow producer', async () => {
    const name = env.queueName('classes');
    @Injectable()
    class SharedConfig {
      createSharedConfiguration() {
        return { ...connection(), defaultJobOptions: { attempts: 2 } };
      }
    }
    @Injectable()
    class QueueConfig {
      createRegisterQueueOptions() {
        return { defaultJobOptions: { attempts: 5, priority: 4 } };
      }
    }
    @Injectable()
    class FlowConfig {
      createRegisterFlowProducerOptions() {
        return connection();
      }
    }
    @Module({ providers: [FlowConfig], exports: [FlowConfig] })
    class ConfigModule {}
    const app = await start([
      BullModule.forRootAsync({ useClass: SharedConfig }),
      BullModule.registerQueueAsync({ name, useClass: QueueConfig }),
      BullModule.registerFlowProducerAsync({ name: 'existing', imports: [ConfigModule], useExisting: FlowConfig }),
    ]);
    const job = await app.get<Queue>(getQueueToken(name)).add('x', {});
    expect(job.opts).toMatchObject({ attempts: 5, priority: 4 });
    expect(await env.queue(name).getJobState(String(job.id))).toBe('prioritized');
    expect(app.get<FlowProducer>(getFlowProducerToken('existing')).prefix).toBe(env.prefix);
  });
});

describe('the processors option of registerQueue', () => {
  const echo = fileURLToPath(new URL('../../hopper/test/fixtures/sandbox/echo.mjs', import.meta.url));

  it('starts a worker per entry: a function, a function with options, a sandboxed file', async () => {
    const calls: string[] = [];
    const fn = env.queueName('fn');
    const advanced = env.queueName('advanced');
    const sandboxed = env.queueName('sandboxed');
    const app = await start([
      BullModule.forRoot(connection()),
      BullModule.registerQueue(
        { name: fn, processors: [async (job: Job) => calls.push(`fn:${String(job.id)}`)] },
        { name: advanced, processors: [{ callback: async (job: Job) => `advanced:${String(job.id)}`, concurrency: 3 }] },
        { name: sandboxed, processors: [{ path: echo, concurrency: 1 }] },
      ),
    ]);
    const fnQueue = app.get<Queue>(getQueueToken(fn));
    await processed(fnQueue);
    expect(calls).toHaveLength(1);
    const advancedQueue = app.get<Queue>(getQueueToken(advanced));
    expect(await processed(advancedQueue)).toMatch(/^advanced:/);
    const sandboxedQueue = app.get<Queue>(getQueueToken(sandboxed));
    expect(await processed(sandboxedQueue, { hello: 'sandbox' })).toMatchObject({
      format: 'esm',
      data: { hello: 'sandbox' },
      queueName: sandboxed,
    });
    expect(await advancedQueue.getWorkers()).toHaveLength(1);
    // Their workers close with the application.
    await app.close();
    apps.splice(apps.indexOf(app), 1);
    expect(await env.queue(fn).getWorkers()).toEqual([]);
  });

  it('runs with registerQueueAsync and forRootAsync, without app.init() (as @nestjs/bullmq starts them with the queue)', async () => {
    const name = env.queueName('no-init');
    let ran: (id: string) => void = () => undefined;
    const done = new Promise<string>((resolve) => (ran = resolve));
    const app = await Test.createTestingModule({
      imports: [
        BullModule.forRootAsync({ useFactory: () => connection() }),
        BullModule.registerQueueAsync({ name, useFactory: () => ({ processors: [async (job: Job) => ran(String(job.id))] }) }),
      ],
    }).compile();
    apps.push(app);
    const job = await app.get<Queue>(getQueueToken(name)).add('x', {});
    expect(await done).toBe(String(job.id));
  });

  it('refuses a bad entry, or sharedConnection: true, before opening anything', async () => {
    @Injectable()
    class Nothing {}
    const bad: [unknown, RegExp, typeof InvalidOptionsError | typeof UnsupportedOptionError][] = [
      [{ processors: 'not-an-array' }, /processors must be an array/, InvalidOptionsError],
      [{ processors: [42] }, /processors\[0\] must be/, InvalidOptionsError],
      [
        { processors: [async () => 1, { callback: async () => 1, path: echo }] },
        /processors\[1\] must be .*exactly one of callback and path/,
        InvalidOptionsError,
      ],
      [{ processors: [{ concurrency: 2 }] }, /processors\[0\] must be/, InvalidOptionsError],
      [{ sharedConnection: true }, /sharedConnection .* is not supported by Hopper/, UnsupportedOptionError],
      [{ extraOptions: { manualRegistration: true } }, /extraOptions are the module's, not a queue's/, InvalidOptionsError],
    ];
    for (const [options, message, errorClass] of bad) {
      const name = env.queueName('bad');
      const module = await Test.createTestingModule({
        imports: [BullModule.forRoot(connection()), BullModule.registerQueue({ name, ...(options as RegisterQueueOptions) })],
        providers: [Nothing],
      })
        .compile()
        .catch((error: unknown) => error);
      expect(module).toBeInstanceOf(errorClass);
      expect((module as Error).message).toMatch(message);
      // Nothing was opened: no queue meta, no worker.
      expect(await env.queue(name).getWorkers()).toEqual([]);
    }
  });
});
