/**
 * Type-level test: a module written the way @nestjs/bullmq applications are (forRootAsync with a
 * factory, registerQueue/registerFlowProducer, a processor with worker events, a queue-events
 * listener, injected queue and flow producer, a test module with getQueueToken), with only its
 * imports changed to hopper-queue-nestjs and hopper. `npm run typecheck` compiles it; it is not run.
 */
import { Injectable, Module } from '@nestjs/common';
import type { FlowProducer, Job, Queue } from 'hopper-queue';
import {
  BullModule,
  BullRegistrar,
  InjectFlowProducer,
  InjectQueue,
  OnQueueEvent,
  OnWorkerEvent,
  Processor,
  QueueEventsHost,
  QueueEventsListener,
  WorkerHost,
  getQueueToken,
  type BullModuleExtraOptions,
  type BullQueueProcessor,
  type BullRootModuleOptions,
  type RegisterQueueOptions,
  type RegisterQueueOptionsFactory,
  type SharedBullConfigurationFactory,
} from '../../src/index.js';

interface Invoice {
  id: string;
  amount: number;
}

@Injectable()
export class InvoicesService {
  constructor(
    @InjectQueue('invoices') private readonly invoices: Queue<Invoice>,
    @InjectFlowProducer('pipeline') private readonly pipeline: FlowProducer,
  ) {}

  async submit(invoice: Invoice): Promise<string | undefined> {
    const job = await this.invoices.add('ocr', invoice, {
      attempts: 5,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: 1000,
    });
    await this.pipeline.add({ name: 'index', queueName: 'index', children: [{ name: 'ocr', queueName: 'invoices', data: invoice }] });
    return job.id;
  }
}

@Processor('invoices', { concurrency: 5, limiter: { max: 10, duration: 1000 } })
export class InvoicesProcessor extends WorkerHost {
  async process(job: Job<Invoice>, token?: string, signal?: AbortSignal): Promise<{ total: number }> {
    if (signal?.aborted) throw new Error(`aborted ${token ?? ''}`);
    await job.updateProgress(50);
    return { total: job.data.amount };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<Invoice> | undefined, error: Error): void {
    void job;
    void error;
  }
}

@QueueEventsListener('invoices')
export class InvoicesEvents extends QueueEventsHost {
  @OnQueueEvent('completed')
  onCompleted({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }): void {
    void jobId;
    void returnvalue;
  }
}

@Module({
  imports: [
    BullModule.forRootAsync({
      useFactory: () => ({ connection: { host: 'localhost', port: 6379 }, defaultJobOptions: { attempts: 3 } }),
    }),
    BullModule.registerQueue({ name: 'invoices' }, { name: 'index' }),
    BullModule.registerFlowProducer({ name: 'pipeline' }),
  ],
  providers: [InvoicesService, InvoicesProcessor, InvoicesEvents],
})
export class InvoicesModule {}

/** The unit-test pattern: the queue replaced through its token. */
export const testProviders = [
  InvoicesService,
  { provide: getQueueToken('invoices'), useValue: { add: () => Promise.resolve({ id: '1' }) } },
];

/** @nestjs/bullmq's manual registration: the registrar injected by its type, register() called when this replica should work. */
@Injectable()
export class Leader {
  constructor(private readonly registrar: BullRegistrar) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.registrar.register();
  }
}

const extraOptions: BullModuleExtraOptions = { manualRegistration: true };
const rootOptions: BullRootModuleOptions = { connection: { host: 'localhost', port: 6379 }, extraOptions };

/** Every shape of the `processors` queue option. */
const processors: BullQueueProcessor[] = [
  async (job: Job) => job.data as unknown,
  { callback: async (job: Job) => job.id, concurrency: 2 },
  '/srv/app/processors/resize.js',
  new URL('file:///srv/app/processors/resize.js'),
  { path: '/srv/app/processors/resize.js', useWorkerThreads: true, concurrency: 4 },
];
const withProcessors: RegisterQueueOptions = { name: 'images', processors, forceDisconnectOnShutdown: true };

@Module({
  imports: [
    BullModule.forRoot(rootOptions),
    BullModule.forRootAsync('other', { useFactory: () => ({ prefix: 'other' }), extraOptions }),
    BullModule.registerQueue(withProcessors),
    BullModule.registerQueueAsync({ name: 'thumbnails' }, { name: 'avatars', configKey: 'other', useFactory: () => ({ processors }) }),
    BullModule.registerFlowProducerAsync({ name: 'pipeline' }),
  ],
  providers: [Leader],
})
export class ManualModule {}

/** @nestjs/bullmq's options classes (useClass). */
@Injectable()
export class SharedConfig implements SharedBullConfigurationFactory {
  createSharedConfiguration(): BullRootModuleOptions {
    return rootOptions;
  }
}
@Injectable()
export class ImagesConfig implements RegisterQueueOptionsFactory {
  createRegisterQueueOptions(): RegisterQueueOptions {
    return { defaultJobOptions: { attempts: 2 } };
  }
}
export const classConfigured = [
  BullModule.forRootAsync({ useClass: SharedConfig }),
  BullModule.registerQueueAsync({ name: 'images', useClass: ImagesConfig }),
];
