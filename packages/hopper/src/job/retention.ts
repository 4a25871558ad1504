/** Retention options (BullMQ's removeOnComplete / removeOnFail) as the backend takes them. */
import type { Retention } from '../backend/backend.js';
import type { KeepJobs } from './options.js';

/**
 * Converts BullMQ's retention option (true, false, a count, or { age (s), count }) to a
 * Retention; `fallback` applies when the job has none.
 */
export function toRetention(spec: boolean | number | KeepJobs | undefined, fallback: Retention): Retention {
  if (spec === undefined) return fallback;
  if (spec === true) return { kind: 'remove' };
  if (spec === false) return { kind: 'keep' };
  if (typeof spec === 'number') return spec <= 0 ? { kind: 'remove' } : { kind: 'limit', count: spec, ageMs: -1 };
  const count = spec.count ?? -1;
  const ageMs = 'age' in spec && spec.age !== undefined ? Math.round(spec.age * 1000) : -1;
  if (count === 0) return { kind: 'remove' };
  if (count < 0 && ageMs < 0) return { kind: 'keep' };
  return { kind: 'limit', count, ageMs };
}
