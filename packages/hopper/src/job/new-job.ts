/** A job's options and data, serialised as the backend adds them. */
import type { NewJob } from '../backend/backend.js';
import { serialize, type JobsOptions } from './options.js';

/** Serialises a validated job (options already merged with defaults) for the backend. */
export function toNewJob(name: string, data: unknown, opts: JobsOptions): NewJob {
  const { jobId, ...stored } = opts;
  const storedJson = JSON.stringify(stored);
  const dedup = opts.deduplication;
  return {
    name,
    data: serialize(data === undefined ? {} : data, 'Job data', opts.sizeLimit, name),
    opts: storedJson === '{}' ? '' : storedJson,
    customId: jobId ?? '',
    priority: opts.priority ?? 0,
    delay: opts.delay ?? 0,
    lifo: opts.lifo ?? false,
    timestamp: opts.timestamp ?? 0,
    ...(opts.cost !== undefined ? { cost: opts.cost } : {}),
    dedup: dedup
      ? dedup.keepLastIfActive
        ? // keepLastIfActive holds the id until the job finishes (no ttl), as in BullMQ.
          { id: dedup.id, ttl: 0, extend: false, replace: dedup.replace ?? false, keepLast: true }
        : { id: dedup.id, ttl: dedup.ttl ?? 0, extend: dedup.extend ?? false, replace: dedup.replace ?? false }
      : undefined,
  };
}
