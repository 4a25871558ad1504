/**
 * The founding guide's NestJS example (EmailsService, EmailsProcessor with a mailer and an
 * idempotency store, a daily digest scheduler) with only its imports changed to hopper-queue-nestjs and
 * hopper, run as a real application; and the guide's two testing patterns: the processor unit
 * test (instantiated directly) and the queue mocked through getQueueToken.
 */
import 'reflect-metadata';
import { Inject, Injectable, Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Job, Queue } from 'hopper-queue';
import { describe, expect, it, vi } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { BullModule, InjectQueue, OnWorkerEvent, Processor, WorkerHost, getQueueToken } from '../src/index.js';

const env = useHopper();

@Injectable()
class MailerService {
  readonly sent: string[] = [];
  async sendWelcome(userId: string): Promise<void> {
    this.sent.push(`welcome:${userId}`);
  }
  async sendDigest(): Promise<void> {
    this.sent.push('digest');
  }
}

@Injectable()
class IdempotencyStore {
  private readonly seen = new Map<string, unknown>();
  async has(key: string): Promise<boolean> {
    return this.seen.has(key);
  }
  async set(key: string, value: unknown, _ttlSeconds: number): Promise<void> {
    this.seen.set(key, value);
  }
}

function emailsModule(queueName: string) {
  @Injectable()
  class EmailsService {
    constructor(@InjectQueue(queueName) private q: Queue) {}

    async sendWelcome(userId: string) {
      await this.q.add('welcome', { userId }, { jobId: `welcome:${userId}`, attempts: 3, backoff: { type: 'exponential', delay: 5000 } });
    }

    async scheduleDigest() {
      await this.q.upsertJobScheduler('daily-digest', { pattern: '0 7 * * *', tz: 'Europe/Paris' }, { name: 'daily-digest', data: {} });
    }
  }

  @Processor(queueName, { concurrency: 5, limiter: { max: 100, duration: 60_000 } })
  class EmailsProcessor extends WorkerHost {
    private readonly logger = new Logger('EmailsProcessor');
    failures: string[] = [];

    constructor(
      @Inject(MailerService) private mailer: MailerService,
      @Inject(IdempotencyStore) private idem: IdempotencyStore,
    ) {
      super();
    }

    async process(job: Job<{ userId: string }>): Promise<void> {
      const key = `processed:${job.queueName}:${job.id}`;
      if (await this.idem.has(key)) return;
      switch (job.name) {
        case 'welcome':
          await this.mailer.sendWelcome(job.data.userId);
          break;
        case 'daily-digest':
          await this.mailer.sendDigest();
          break;
        default:
          throw new Error(`unknown job ${job.name}`);
      }
      await this.idem.set(key, true, 86400);
    }

    @OnWorkerEvent('failed')
    onFailed(job: Job, err: Error) {
      this.failures.push(`${job.id}: ${err.message}`);
      this.logger.debug(`Job ${job.id} failed`);
    }
  }

  @Module({
    imports: [
      BullModule.forRoot({
        connection: env.url,
        prefix: env.prefix,
        defaultJobOptions: {
          attempts: 5,
          backoff: { type: 'exponential', delay: 2000 },
          removeOnComplete: { age: 3600, count: 1000 },
          removeOnFail: { age: 86400 },
        },
      }),
      BullModule.registerQueue({ name: queueName }),
    ],
    providers: [MailerService, IdempotencyStore, EmailsService, EmailsProcessor],
  })
  class AppModule {}

  return { AppModule, EmailsService, EmailsProcessor };
}

describe("the founding guide's NestJS example on Hopper", () => {
  it('sends a welcome once per user, fails unknown jobs, and schedules the digest idempotently', async () => {
    const queueName = env.queueName('emails');
    const { AppModule, EmailsService, EmailsProcessor } = emailsModule(queueName);
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await app.init();
    try {
      const svc = app.get(EmailsService);
      const mailer = app.get(MailerService);
      await svc.sendWelcome('u1');
      await svc.sendWelcome('u1'); // same jobId: one job
      await svc.scheduleDigest();
      await svc.scheduleDigest(); // idempotent: one scheduler
      await env.queue(queueName).add('mystery', {}, { attempts: 1 });
      const processor = app.get(EmailsProcessor);
      const deadline = Date.now() + 10_000;
      while ((!mailer.sent.includes('welcome:u1') || processor.failures.length === 0) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(mailer.sent.filter((s) => s === 'welcome:u1')).toHaveLength(1);
      expect(processor.failures).toEqual([expect.stringContaining('unknown job mystery')]);
      expect(await env.queue(queueName).getJobSchedulersCount()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('unit-tests the processor directly, and the service with the queue mocked', async () => {
    const { EmailsService, EmailsProcessor } = emailsModule('emails');
    const mailer = new MailerService();
    const idem = new IdempotencyStore();
    const proc = new EmailsProcessor(mailer, idem);
    await proc.process({ id: '1', name: 'welcome', data: { userId: 'u1' }, queueName: 'emails' } as unknown as Job<{ userId: string }>);
    expect(mailer.sent).toEqual(['welcome:u1']);

    const queueMock = { add: vi.fn() };
    const moduleRef = await Test.createTestingModule({
      providers: [EmailsService, { provide: getQueueToken('emails'), useValue: queueMock }],
    }).compile();
    await moduleRef.get(EmailsService).sendWelcome('u2');
    expect(queueMock.add).toHaveBeenCalledWith('welcome', { userId: 'u2' }, expect.objectContaining({ jobId: 'welcome:u2' }));
  });
});
