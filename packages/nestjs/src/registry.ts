/**
 * Everything the module opened (queues with their `processors` workers, flow producers, the
 * workers of `@Processor` classes, queue events), and closing it in the right order when the
 * application shuts down: workers first (they finish the jobs they run, which may still add jobs
 * through the injected queues), then the rest.
 */
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { FlowProducer, Queue, Worker, type FlowProducerOptions, type QueueEvents, type QueueOptions } from 'hopper-queue';
import { invalidOptions, unsupportedOption } from './errors.js';
import type { RegisterQueueOptions } from './interfaces.js';
import { processorSpecs } from './queue-processors.js';

/** What a queue's workers and listeners take from its options: where Redis is, the key prefix and the clock. */
export function inheritedOptions(options: QueueOptions): Pick<QueueOptions, 'connection' | 'prefix' | 'clock'> {
  return {
    ...(options.connection !== undefined ? { connection: options.connection } : {}),
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
  };
}

@Injectable()
export class HopperRegistry implements OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('HopperModule');
  /** Each registered queue's options (shared config merged with its own), by queue name. */
  readonly queueOptions = new Map<string, QueueOptions>();
  private readonly queues: Queue[] = [];
  private readonly flowProducers: FlowProducer[] = [];
  readonly workers: Worker[] = [];
  readonly queueEvents: QueueEvents[] = [];
  private closingFlag = false;

  /** True once the application has begun shutting down. */
  get closing(): boolean {
    return this.closingFlag;
  }

  /**
   * Opens a queue for `registerQueue` (its options are remembered for its processor), and a
   * running Worker per entry of its `processors`. Checks every option before opening anything.
   */
  openQueue(name: string, registration: RegisterQueueOptions & { extraOptions?: unknown }): Queue {
    // The module's own keys; the rest is the Queue's.
    const {
      name: _name,
      configKey: _configKey,
      processors,
      forceDisconnectOnShutdown: _force,
      sharedConnection,
      extraOptions,
      ...options
    } = registration;
    if (extraOptions !== undefined) {
      throw invalidOptions(`registerQueue "${name}": extraOptions are the module's, not a queue's: give them to forRoot or forRootAsync.`);
    }
    if (sharedConnection === true) {
      throw unsupportedOption(
        `registerQueue "${name}": sharedConnection (@nestjs/bullmq's, unsupported since BullMQ 5) is not supported by Hopper. To share a connection, pass your ioredis instance as connection.`,
        'registerQueue',
        'sharedConnection',
      );
    }
    const specs = processorSpecs(name, processors);
    const queue = new Queue(name, options);
    const started: Worker[] = [];
    try {
      for (const spec of specs) {
        const worker = new Worker(name, spec.processor, { ...inheritedOptions(options), ...spec.options });
        started.push(worker);
        worker.on('error', (error: Error) => this.logger.error(`Worker of queue "${name}" (processors): ${error.message}`, error.stack));
      }
    } catch (error) {
      for (const made of [queue, ...started]) made.close().catch(() => undefined);
      throw error;
    }
    this.queueOptions.set(name, options);
    this.queues.push(queue);
    this.workers.push(...started);
    return queue;
  }

  /** Opens a flow producer for `registerFlowProducer`. */
  openFlowProducer(options: FlowProducerOptions): FlowProducer {
    const producer = new FlowProducer(options);
    this.flowProducers.push(producer);
    return producer;
  }

  /** Drops workers and queue events that were closed before they were handed out (a failed registration). */
  forget(items: readonly (Worker | QueueEvents)[]): void {
    for (const list of [this.workers, this.queueEvents] as (Worker | QueueEvents)[][]) {
      for (const item of items) {
        const at = list.indexOf(item);
        if (at >= 0) list.splice(at, 1);
      }
    }
  }

  /** Workers close first, gracefully: the jobs they run finish (within their closeTimeout). */
  async onModuleDestroy(): Promise<void> {
    this.closingFlag = true;
    await Promise.all(this.workers.splice(0).map((worker) => worker.close()));
  }

  async onApplicationShutdown(): Promise<void> {
    this.closingFlag = true;
    await Promise.all([
      ...this.queueEvents.splice(0).map((events) => events.close()),
      ...this.queues.splice(0).map((queue) => queue.close()),
      ...this.flowProducers.splice(0).map((producer) => producer.close()),
    ]);
  }
}
