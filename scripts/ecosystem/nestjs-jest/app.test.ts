import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BullModule, InjectQueue, OnWorkerEvent, Processor, WorkerHost } from 'hopper-queue-nestjs';
import { Job, Queue } from 'hopper-queue';

const prefix = `nest-jest-${process.pid}`;
const done: string[] = [];

@Injectable()
class Emails {
  constructor(@InjectQueue('emails') readonly queue: Queue) {}
}

@Processor('emails')
class EmailsProcessor extends WorkerHost {
  async process(job: Job<{ to: string }>): Promise<string> {
    return `sent to ${job.data.to}`;
  }
  @OnWorkerEvent('completed')
  onCompleted(job: Job): void {
    done.push(String(job.returnvalue));
  }
}

@Module({
  imports: [
    BullModule.forRoot({ connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix }),
    BullModule.registerQueue({ name: 'emails' }),
  ],
  providers: [Emails, EmailsProcessor],
})
class AppModule {}

test('a Nest application under Jest (ts-jest, CommonJS) adds and processes a job with hopper-queue-nestjs', async () => {
  const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await app.init();
  try {
    const emails = app.get(Emails);
    const job = await emails.queue.add('welcome', { to: 'ada@example.com' });
    for (let i = 0; i < 100 && done.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(done).toEqual(['sent to ada@example.com']);
    expect(await emails.queue.getJobState(job.id!)).toBe('completed');
    await emails.queue.obliterate({ force: true });
  } finally {
    await app.close();
  }
});
