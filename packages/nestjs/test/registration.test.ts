/**
 * How processors and listeners get their Workers and QueueEvents: every kind of provider
 * (useClass, useValue, useFactory, useExisting), manual registration with HopperRegistrar /
 * BullRegistrar, the moment `this.worker` exists, and event handlers that throw.
 */
import 'reflect-metadata';
import { ConsoleLogger, Inject, Injectable, Module, Scope, type OnModuleInit } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { InvalidOptionsError, type Job, type Queue } from 'hopper-queue';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import {
  BullModule,
  BullRegistrar,
  HopperRegistrar,
  OnQueueEvent,
  OnWorkerEvent,
  Processor,
  QueueEventsHost,
  QueueEventsListener,
  WorkerHost,
  getQueueToken,
} from '../src/index.js';

const env = useHopper();

/** Nest's logger for one test: what the module logs as errors is kept, and checked after the test. */
class CapturingLogger extends ConsoleLogger {
  readonly errors: string[] = [];
  private waiters: { pattern: RegExp; count: number; resolve: () => void }[] = [];
  override error(message: unknown): void {
    this.errors.push(String(message));
    this.waiters = this.waiters.filter((w) => (this.matching(w.pattern) >= w.count ? (w.resolve(), false) : true));
  }
  /** Resolves once `count` errors matching `pattern` were logged. */
  logged(pattern: RegExp, count: number): Promise<void> {
    if (this.matching(pattern) >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ pattern, count, resolve }));
  }
  private matching(pattern: RegExp): number {
    return this.errors.filter((e) => pattern.test(e)).length;
  }
  override warn(): void {}
  override log(): void {}
}

let logger = new CapturingLogger();
let expectedErrors: RegExp | undefined;
const apps: TestingModule[] = [];

/** Compiles a module with the capturing logger; closed after the test. */
async function compile(metadata: Parameters<typeof Test.createTestingModule>[0]): Promise<TestingModule> {
  logger = new CapturingLogger();
  const app = await Test.createTestingModule(metadata).setLogger(logger).compile();
  apps.push(app);
  return app;
}

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  // A worker or listener error is a test failure unless the test provoked it.
  expect(logger.errors.filter((e) => !expectedErrors?.test(e))).toEqual([]);
  expectedErrors = undefined;
});

const root = () => BullModule.forRoot({ connection: env.url, prefix: env.prefix });

/** Adds a job and waits (5 s at most) for it to complete; returns its result. */
async function processed(queue: Queue, data: unknown = {}): Promise<unknown> {
  const events = env.events(queue.name);
  await events.waitUntilReady();
  const job = await queue.add('job', data);
  return job.waitUntilFinished(events, 5_000);
}

describe('processors of every kind of provider', () => {
  it('gives a Worker to processors provided with useClass, useValue and useFactory, one per instance (useExisting is the same one)', async () => {
    const q = { a: env.queueName('a'), b: env.queueName('b'), c: env.queueName('c') };
    @Processor(q.a)
    class ProcessorA extends WorkerHost {
      async process(): Promise<string> {
        return 'A';
      }
    }
    @Processor(q.b)
    class ProcessorB extends WorkerHost {
      async process(): Promise<string> {
        return 'B';
      }
    }
    @Processor(q.c)
    class ProcessorC extends WorkerHost {
      async process(job: Job<{ n: number }>): Promise<number> {
        return job.data.n * 2;
      }
    }
    const app = await compile({
      imports: [root(), BullModule.registerQueue({ name: q.a }, { name: q.b }, { name: q.c })],
      providers: [
        { provide: 'A', useClass: ProcessorA },
        { provide: 'B', useValue: new ProcessorB() },
        { provide: 'C', useFactory: () => new ProcessorC() },
        { provide: 'B2', useExisting: 'B' },
      ],
    });
    await app.init();
    expect(app.get<ProcessorB>('B').worker.name).toBe(q.b);
    expect(app.get<ProcessorC>('C').worker.name).toBe(q.c);
    expect(await processed(app.get<Queue>(getQueueToken(q.a)))).toBe('A');
    expect(await processed(app.get<Queue>(getQueueToken(q.b)))).toBe('B');
    expect(await processed(app.get<Queue>(getQueueToken(q.c)), { n: 21 })).toBe(42);
    // The alias did not start a second worker on queue b.
    expect(await app.get<Queue>(getQueueToken(q.b)).getWorkers()).toHaveLength(1);
  });

  it('gives QueueEvents to a listener provided with useFactory', async () => {
    const name = env.queueName('listened');
    let heard: (jobId: string) => void = () => undefined;
    const completed = new Promise<string>((resolve) => (heard = resolve));
    @QueueEventsListener(name)
    class Listener extends QueueEventsHost {
      @OnQueueEvent('completed')
      onCompleted({ jobId }: { jobId: string }): void {
        heard(jobId);
      }
    }
    const app = await compile({
      imports: [root(), BullModule.registerQueue({ name })],
      providers: [{ provide: 'L', useFactory: () => new Listener() }],
    });
    await app.init();
    const listener = app.get<Listener>('L');
    expect(listener.queueEvents.name).toBe(name);
    env.worker(name, async () => 'done');
    const job = await app.get<Queue>(getQueueToken(name)).add('x', {});
    expect(await completed).toBe(String(job.id));
  });
});

describe('scoped processors', () => {
  it('refuses a request- or transient-scoped @Processor at start, with a typed error', async () => {
    for (const scope of [Scope.REQUEST, Scope.TRANSIENT]) {
      const name = env.queueName('scoped');
      @Processor(name)
      class ScopedProcessor extends WorkerHost {
        async process(): Promise<void> {}
      }
      Injectable({ scope })(ScopedProcessor);
      const app = await compile({ imports: [root(), BullModule.registerQueue({ name })], providers: [ScopedProcessor] });
      const failure = await app.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(InvalidOptionsError);
      expect((failure as Error).message).toMatch(/ScopedProcessor: a @Processor or @QueueEventsListener must be a singleton provider/);
    }
  });
});

describe('when the Worker exists', () => {
  it("is created before the application's onModuleInit hooks run (as @nestjs/bullmq's); jobs run only after every onModuleInit", async () => {
    const name = env.queueName('early');
    const seen = { workerAtInit: '', ranBeforeInit: false, initDone: false };
    @Processor(name)
    class EarlyProcessor extends WorkerHost {
      async process(): Promise<void> {
        if (!seen.initDone) seen.ranBeforeInit = true;
      }
    }
    @Injectable()
    class UsesWorker implements OnModuleInit {
      constructor(@Inject(EarlyProcessor) private readonly processor: EarlyProcessor) {}
      async onModuleInit(): Promise<void> {
        // e.g. to tune the worker from configuration loaded at start.
        seen.workerAtInit = this.processor.worker.name;
        await new Promise((resolve) => setImmediate(resolve));
        seen.initDone = true;
      }
    }
    @Module({ providers: [EarlyProcessor, UsesWorker] })
    class FeatureModule {}
    await env.queue(name).add('waiting-at-start', {});
    const app = await compile({ imports: [root(), BullModule.registerQueue({ name }), FeatureModule] });
    await app.init();
    expect(seen.workerAtInit).toBe(name);
    expect(await processed(app.get<Queue>(getQueueToken(name)))).toBeNull();
    expect(seen.ranBeforeInit).toBe(false);
  });
});

describe('manual registration (extraOptions.manualRegistration, HopperRegistrar / BullRegistrar)', () => {
  function declare(name: string) {
    const processed: string[] = [];
    @Processor(name)
    class ManualProcessor extends WorkerHost {
      async process(job: Job): Promise<void> {
        processed.push(String(job.id));
      }
    }
    @QueueEventsListener(name)
    class ManualListener extends QueueEventsHost {}
    return { ManualProcessor, ManualListener, processed };
  }

  it('forRoot: nothing is created until register(), which creates them at once and starts them', async () => {
    const name = env.queueName('manual');
    const { ManualProcessor, ManualListener } = declare(name);
    const app = await compile({
      imports: [
        BullModule.forRoot({ connection: env.url, prefix: env.prefix, extraOptions: { manualRegistration: true } }),
        // Another configuration without extra options does not turn manual registration off.
        BullModule.forRoot('other', { connection: env.url, prefix: env.prefix }),
        BullModule.registerQueue({ name }),
      ],
      providers: [ManualProcessor, ManualListener],
    });
    await app.init();
    const queue = app.get<Queue>(getQueueToken(name));
    expect(() => app.get(ManualProcessor).worker).toThrow(/"Worker" has not yet been initialized/);
    expect(() => app.get(ManualListener).queueEvents).toThrow(/"QueueEvents" class has not yet been initialized/);
    expect(await queue.getWorkers()).toEqual([]);
    expect(app.get(BullRegistrar)).toBe(app.get(HopperRegistrar));
    const registered = app.get(BullRegistrar).register();
    // Created synchronously, as @nestjs/bullmq's register() does.
    expect(app.get(ManualProcessor).worker.name).toBe(name);
    expect(app.get(ManualListener).queueEvents.name).toBe(name);
    await registered;
    expect(await processed(queue)).toBeNull();
    // Registering again creates nothing new.
    await app.get(BullRegistrar).register();
    expect(await queue.getWorkers()).toHaveLength(1);
  });

  it('forRootAsync: extraOptions beside the factory (or in what it returns)', async () => {
    for (const where of ['beside', 'returned'] as const) {
      const name = env.queueName('manual-async');
      const { ManualProcessor, ManualListener, processed: done } = declare(name);
      const config = { connection: env.url, prefix: env.prefix };
      const app = await compile({
        imports: [
          where === 'beside'
            ? BullModule.forRootAsync({ useFactory: () => config, extraOptions: { manualRegistration: true } })
            : BullModule.forRootAsync({ useFactory: () => ({ ...config, extraOptions: { manualRegistration: true } }) }),
          BullModule.registerQueue({ name }),
        ],
        providers: [ManualProcessor, ManualListener],
      });
      await app.init();
      expect(() => app.get(ManualProcessor).worker).toThrow(/has not yet been initialized/);
      await app.get(HopperRegistrar).register();
      await processed(app.get<Queue>(getQueueToken(name)));
      expect(done).toHaveLength(1);
    }
  });

  it('register() before bootstrap creates the workers, which start at bootstrap', async () => {
    const name = env.queueName('manual-early');
    const { ManualProcessor, processed: done } = declare(name);
    @Injectable()
    class Leader {
      constructor(@Inject(HopperRegistrar) private readonly registrar: HopperRegistrar) {}
      async onModuleInit(): Promise<void> {
        await this.registrar.register();
      }
    }
    const app = await compile({
      imports: [
        BullModule.forRoot({ connection: env.url, prefix: env.prefix, extraOptions: { manualRegistration: true } }),
        BullModule.registerQueue({ name }),
      ],
      providers: [ManualProcessor, Leader],
    });
    await app.init();
    expect(app.get(ManualProcessor).worker.isRunning()).toBe(true);
    await processed(app.get<Queue>(getQueueToken(name)));
    expect(done).toHaveLength(1);
  });
});

describe('event handlers that throw', () => {
  it('are logged; the worker goes on and no rejection is left unhandled', async () => {
    const name = env.queueName('throwing');
    @Processor(name)
    class ThrowingHandlers extends WorkerHost {
      async process(job: Job): Promise<unknown> {
        return job.data;
      }
      @OnWorkerEvent('completed')
      onCompleted(): void {
        throw new Error('sync handler failure');
      }
      @OnWorkerEvent('active')
      async onActive(): Promise<void> {
        throw new Error('async handler failure');
      }
    }
    expectedErrors = /handler on(Completed|Active) threw: (sync|async) handler failure/;
    const app = await compile({ imports: [root(), BullModule.registerQueue({ name })], providers: [ThrowingHandlers] });
    await app.init();
    const queue = app.get<Queue>(getQueueToken(name));
    expect(await processed(queue, { a: 1 })).toEqual({ a: 1 });
    expect(await processed(queue, { a: 2 })).toEqual({ a: 2 });
    // Each handler failed for each job, and the worker processed the second job all the same.
    await logger.logged(/onCompleted threw: sync handler failure/, 2);
    await logger.logged(/onActive threw: async handler failure/, 2);
  });
});
