/**
 * The one check of a dead-letter route, applied by every path that stores job options (Queue.add
 * and addBulk, FlowProducer, job scheduler templates, job.continueWith): a job that fails for good
 * is dead-lettered in the same script, so its dead-letter queue must be reachable from its own
 * queue's script: not the queue itself, and in Redis Cluster in the same slot (one hash tag).
 */
import type { QueueBackend } from '../backend/backend.js';
import { CrossSlotError, InvalidOptionsError } from './errors.js';

/** Throws unless jobs of `backend`'s queue may be dead-lettered to `deadLetterQueue` (none: nothing to check). */
export function checkDeadLetterRoute(
  backend: Pick<QueueBackend, 'queueName' | 'isCluster' | 'sharesSlotWith'>,
  deadLetterQueue?: string,
): void {
  if (deadLetterQueue === undefined) return;
  const queueName = backend.queueName;
  if (deadLetterQueue === queueName) {
    throw new InvalidOptionsError(`Queue "${queueName}" cannot be its own dead-letter queue: name another queue in deadLetter.queue.`);
  }
  if (backend.isCluster && !backend.sharesSlotWith(deadLetterQueue)) {
    throw new CrossSlotError(
      `Queues "${queueName}" and "${deadLetterQueue}" are in different Redis Cluster slots, so a job cannot fail and be dead-lettered in one atomic step. ` +
        `Put both under one hash tag: give both Queues (and their Workers, FlowProducers) a prefix containing a tag, e.g. prefix: '{app}'. Nothing was written.`,
    );
  }
}
