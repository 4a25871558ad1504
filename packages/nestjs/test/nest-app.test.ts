/**
 * A real Nest application on Hopper: a producer service, processors, a listener of two queues, a
 * declared scheduler, start after bootstrap and graceful shutdown; and the unit-testing pattern
 * with a mocked queue.
 */
import 'reflect-metadata';
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { FlowProducer, Job, Queue } from 'hopper-queue';
import { describe, expect, it, vi } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import {
  BullModule,
  InjectFlowProducer,
  InjectQueue,
  JobScheduler,
  OnQueueEvent,
  OnWorkerEvent,
  Processor,
  QueueEventsHost,
  QueueEventsListener,
  WorkerHost,
  getQueueToken,
} from '../src/index.js';

const env = useHopper();

/** A promise resolved from outside (the test decides when a job may finish). */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Builds the application for one test: queue names are unique per test. */
function buildApp(q: { emails: string; reports: string }) {
  const seen = { completed: [] as string[], events: [] as [string, string][], initDoneWhenProcessed: [] as boolean[] };
  const hold = { gate: undefined as ReturnType<typeof gate> | undefined, started: gate() };

  @Injectable()
  class Templates implements OnModuleInit {
    ready = false;
    async onModuleInit(): Promise<void> {
      // A service that takes a moment to initialise (loading templates): processors must wait for it.
      await new Promise((resolve) => setImmediate(resolve));
      this.ready = true;
    }
  }

  @Injectable()
  class EmailsService {
    constructor(
      @InjectQueue(q.emails) private readonly queue: Queue,
      @InjectFlowProducer('flows') readonly flows: FlowProducer,
    ) {}
    send(to: string): Promise<Job> {
      return this.queue.add('welcome', { to }, { attempts: 3, backoff: { type: 'exponential', delay: 100 } });
    }
  }

  @JobScheduler('digest', { pattern: '0 7 * * *', tz: 'Europe/Paris' }, { name: 'digest' })
  @Processor(q.emails, { concurrency: 3 })
  class EmailsProcessor extends WorkerHost {
    constructor(@Inject(Templates) private readonly templates: Templates) {
      super();
    }
    async process(job: Job<{ to: string }>): Promise<string> {
      seen.initDoneWhenProcessed.push(this.templates.ready);
      hold.started.open();
      if (hold.gate) await hold.gate.promise;
      return `sent to ${job.data.to}`;
    }
    @OnWorkerEvent('completed')
    onCompleted(job: Job): void {
      seen.completed.push(String(job.id));
    }
  }

  @Processor(q.reports)
  class ReportsProcessor extends WorkerHost {
    async process(): Promise<number> {
      return 42;
    }
  }

  @QueueEventsListener([q.emails, q.reports])
  class Audit extends QueueEventsHost {
    @OnQueueEvent('completed')
    onCompleted({ jobId }: { jobId: string }, _id: string, queueName: string): void {
      seen.events.push([queueName, jobId]);
    }
  }

  @Module({
    imports: [
      BullModule.forRoot({ connection: env.url, prefix: env.prefix }),
      BullModule.registerQueue({ name: q.emails }, { name: q.reports }),
      BullModule.registerFlowProducer({ name: 'flows' }),
    ],
    providers: [Templates, EmailsService, EmailsProcessor, ReportsProcessor, Audit],
  })
  class AppModule {}

  return { AppModule, EmailsService, EmailsProcessor, Audit, seen, hold };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('hopper-queue-nestjs in a Nest application', () => {
  it('processes jobs, fires worker and queue events (two queues, one listener), declares its scheduler once', async () => {
    const q = { emails: env.queueName('emails'), reports: env.queueName('reports') };
    // A job added before the application starts: it must not run before every module has initialised.
    await env.queue(q.emails).add('early', { to: 'early@x' });
    const { AppModule, EmailsService, EmailsProcessor, Audit, seen } = buildApp(q);
    const app: TestingModule = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const processor = app.get(EmailsProcessor);
    expect(() => processor.worker).toThrow(/"Worker" has not yet been initialized/);
    await app.init();
    try {
      expect(processor.worker.concurrency).toBe(3);
      const service = app.get(EmailsService);
      const job = await service.send('a@x');
      await env.queue(q.reports).add('monthly', {});
      await until(() => seen.completed.includes(String(job.id)), 'the welcome job to complete');
      await until(() => seen.events.some(([name]) => name === q.reports), 'the reports completion event');
      expect(seen.initDoneWhenProcessed.every(Boolean)).toBe(true);
      expect(seen.initDoneWhenProcessed.length).toBeGreaterThanOrEqual(2);
      expect(
        await env
          .queue(q.emails)
          .getJob(String(job.id))
          .then((j) => j?.returnvalue),
      ).toBe('sent to a@x');
      await until(() => seen.events.some(([name, id]) => name === q.emails && id === String(job.id)), 'the emails completion event');
      expect(app.get(Audit).allQueueEvents).toHaveLength(2);
      expect(service.flows).toBeDefined();
      expect((await env.queue(q.emails).getJobSchedulers()).map((s) => s.key)).toEqual(['digest']);
    } finally {
      await app.close();
    }
    // A second replica declares the same scheduler: still one.
    const replica = await Test.createTestingModule({ imports: [buildApp(q).AppModule] }).compile();
    await replica.init();
    await replica.close();
    expect(await env.queue(q.emails).getJobSchedulersCount()).toBe(1);
  });

  it('shuts down gracefully: a job in flight finishes before the application closes', async () => {
    const q = { emails: env.queueName('emails'), reports: env.queueName('reports') };
    const { AppModule, EmailsService, seen, hold } = buildApp(q);
    hold.gate = gate();
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await app.init();
    const job = await app.get(EmailsService).send('slow@x');
    await hold.started.promise;
    const closing = app.close();
    // The job is still running while the application closes; let it finish.
    setImmediate(() => hold.gate?.open());
    await closing;
    expect(seen.completed).toContain(String(job.id));
    expect(await env.queue(q.emails).getJobState(String(job.id))).toBe('completed');
  });

  it('supports the unit-testing pattern: the queue mocked through getQueueToken, no Redis', async () => {
    const q = { emails: 'emails', reports: 'reports' };
    const { EmailsService } = buildApp(q);
    const add = vi.fn().mockResolvedValue({ id: '1' });
    const module = await Test.createTestingModule({
      providers: [
        EmailsService,
        { provide: getQueueToken('emails'), useValue: { add } },
        { provide: 'BullFlowProducer_flows', useValue: {} },
      ],
    }).compile();
    await module.get(EmailsService).send('u@x');
    expect(add).toHaveBeenCalledWith('welcome', { to: 'u@x' }, expect.objectContaining({ attempts: 3 }));
  });

  it('takes its configuration from a factory (forRootAsync, registerQueueAsync)', async () => {
    const name = env.queueName('async');
    @Injectable()
    class Config {
      redis = env.url;
    }
    @Module({ providers: [Config], exports: [Config] })
    class ConfigModule {}
    @Module({
      imports: [
        BullModule.forRootAsync({
          imports: [ConfigModule],
          inject: [Config],
          useFactory: (c: Config) => ({ connection: c.redis, prefix: env.prefix }),
        }),
        BullModule.registerQueueAsync({ name, useFactory: () => ({ defaultJobOptions: { attempts: 4 } }) }),
      ],
    })
    class AsyncModule {}
    const app = await Test.createTestingModule({ imports: [AsyncModule] }).compile();
    await app.init();
    try {
      const queue = app.get<Queue>(getQueueToken(name));
      const job = await queue.add('x', {});
      expect(job.opts.attempts).toBe(4);
      expect(await env.queue(name).getJobState(String(job.id))).toBe('waiting');
    } finally {
      await app.close();
    }
  });
});
