/**
 * Everything the module opened (queues, flow producers, workers, queue events), and closing it in
 * the right order when the application shuts down: workers first (they finish the jobs they run,
 * which may still add jobs through the injected queues), then the rest.
 */
import { Injectable, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { FlowProducer, Queue, type FlowProducerOptions, type QueueEvents, type QueueOptions, type Worker } from 'hopper-queue';

@Injectable()
export class HopperRegistry implements OnModuleDestroy, OnApplicationShutdown {
  /** Each registered queue's options (shared config merged with its own), by queue name. */
  readonly queueOptions = new Map<string, QueueOptions>();
  private readonly queues: Queue[] = [];
  private readonly flowProducers: FlowProducer[] = [];
  readonly workers: Worker[] = [];
  readonly queueEvents: QueueEvents[] = [];

  /** Opens a queue for `registerQueue` (its options are remembered for its processor). */
  openQueue(name: string, options: QueueOptions): Queue {
    this.queueOptions.set(name, options);
    const queue = new Queue(name, options);
    this.queues.push(queue);
    return queue;
  }

  /** Opens a flow producer for `registerFlowProducer`. */
  openFlowProducer(options: FlowProducerOptions): FlowProducer {
    const producer = new FlowProducer(options);
    this.flowProducers.push(producer);
    return producer;
  }

  /** Workers close first, gracefully: the jobs they run finish (within their closeTimeout). */
  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((worker) => worker.close()));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([
      ...this.queueEvents.splice(0).map((events) => events.close()),
      ...this.queues.splice(0).map((queue) => queue.close()),
      ...this.flowProducers.splice(0).map((producer) => producer.close()),
    ]);
  }
}
