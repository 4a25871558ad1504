/** The base classes of processors and queue-event listeners. */
import type { Job, QueueEvents, Worker } from 'hopper-queue';

// @nestjs/bullmq's wording (tests written for it match on it); true of Hopper too: the Worker and
// QueueEvents are created when HopperRegistrar's module initialises, or by register().
const WORKER_NOT_READY =
  '"Worker" has not yet been initialized. Make sure to interact with worker instances after the "onModuleInit" lifecycle hook is triggered for example, in the "onApplicationBootstrap" hook, or if "manualRegistration" is set to true make sure to call "BullRegistrar.register()"';
const QUEUE_EVENTS_NOT_READY =
  '"QueueEvents" class has not yet been initialized. Make sure to interact with queue events instances after the "onModuleInit" lifecycle hook is triggered, for example, in the "onApplicationBootstrap" hook, or if "manualRegistration" is set to true make sure to call "BullRegistrar.register()"';

/**
 * Base class of a `@Processor`: implement `process`. `this.worker` is its Worker, created when the
 * module initialises (or by `HopperRegistrar.register()` with manual registration); it starts
 * processing once the application has bootstrapped.
 */
export abstract class WorkerHost<W extends Worker = Worker> {
  private workerInstance: W | undefined;

  /** The Worker running this processor. Throws before it is created (see the class comment). */
  get worker(): W {
    if (!this.workerInstance) throw new Error(`${this.constructor.name}: ${WORKER_NOT_READY}`);
    return this.workerInstance;
  }

  /** Processes one job; its return value is the job's result. `signal` aborts on cancel, timeout or a lost lock. */
  abstract process(job: Job, token?: string, signal?: AbortSignal): Promise<unknown>;
}

/** Base class of a `@QueueEventsListener`. `this.queueEvents` is its QueueEvents (the first one, for several queues). */
export abstract class QueueEventsHost<T extends QueueEvents = QueueEvents> {
  private queueEventsInstances: T[] = [];

  /** The QueueEvents of this listener (of its first queue when it listens to several). Throws before it is created. */
  get queueEvents(): T {
    const first = this.queueEventsInstances[0];
    if (!first) throw new Error(`${this.constructor.name}: ${QUEUE_EVENTS_NOT_READY}`);
    return first;
  }

  /** Every QueueEvents of this listener, one per queue (empty before they are created). */
  get allQueueEvents(): readonly T[] {
    return this.queueEventsInstances;
  }
}
