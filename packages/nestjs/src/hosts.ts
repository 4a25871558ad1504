/** The base classes of processors and queue-event listeners. */
import type { Job, QueueEvents, Worker } from 'hopper-queue';

/**
 * Base class of a `@Processor`: implement `process`. `this.worker` is the running Worker (after
 * the application has bootstrapped).
 */
export abstract class WorkerHost<W extends Worker = Worker> {
  private workerInstance: W | undefined;

  /** The Worker running this processor. Throws before the application has bootstrapped. */
  get worker(): W {
    if (!this.workerInstance) {
      throw new Error(`${this.constructor.name}: its Worker starts when the application has bootstrapped (app.init() or app.listen()).`);
    }
    return this.workerInstance;
  }

  /** Processes one job; its return value is the job's result. `signal` aborts on cancel, timeout or a lost lock. */
  abstract process(job: Job, token?: string, signal?: AbortSignal): Promise<unknown>;
}

/** Base class of a `@QueueEventsListener`. `this.queueEvents` is its QueueEvents (the first one, for several queues). */
export abstract class QueueEventsHost<T extends QueueEvents = QueueEvents> {
  private queueEventsInstances: T[] = [];

  /** The QueueEvents of this listener (of its first queue when it listens to several). */
  get queueEvents(): T {
    const first = this.queueEventsInstances[0];
    if (!first) throw new Error(`${this.constructor.name}: its QueueEvents start when the application has bootstrapped.`);
    return first;
  }

  /** Every QueueEvents of this listener, one per queue. */
  get allQueueEvents(): readonly T[] {
    return this.queueEventsInstances;
  }
}
