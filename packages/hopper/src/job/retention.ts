/** Retention options (BullMQ's removeOnComplete / removeOnFail) as the backend takes them. */
import type { Retention } from '../backend/backend.js';
import type { KeepJobs } from './options.js';

/** The retentions without parameters, shared (a Retention is never changed once made). */
const REMOVE: Retention = Object.freeze({ kind: 'remove' });
const KEEP: Retention = Object.freeze({ kind: 'keep' });

/**
 * Converts BullMQ's retention option (true, false, a count, or { age (s), count }) to a
 * Retention; `fallback` applies when the job has none.
 */
export function toRetention(spec: boolean | number | KeepJobs | undefined, fallback: Retention): Retention {
  if (spec === undefined) return fallback;
  if (spec === true) return REMOVE;
  if (spec === false) return KEEP;
  if (typeof spec === 'number') return spec <= 0 ? REMOVE : { kind: 'limit', count: spec, ageMs: -1 };
  const count = spec.count ?? -1;
  const ageMs = 'age' in spec && spec.age !== undefined ? Math.round(spec.age * 1000) : -1;
  if (count === 0) return REMOVE;
  if (count < 0 && ageMs < 0) return KEEP;
  return { kind: 'limit', count, ageMs };
}
