/**
 * The one place where the Redis backend turns the seam's typed settings into the field names of
 * its hashes and back: the queue's meta hash (queue-wide limits, group defaults, paused, events
 * cap, layout version) and a group's hash (its own settings). The Lua scripts read these fields;
 * api/ only ever sees `QueueSettings` and the change types (backend/records.ts).
 */
import type { GroupSettingValues, GroupSettingsChange, LimiterSetting, QueueSettings, QueueSettingsChange } from '../backend.js';

/** Where a set of group settings lives in a hash: one field per setting, three for the limiter. */
interface GroupFieldNames {
  concurrency: string;
  max: string;
  duration: string;
  /** '1' when the limiter is weighted by the jobs' cost. */
  weighted: string;
  maxSize: string;
  weight: string;
}

/** A group's own settings in its hash (includes/groups.lua, configureGroup.lua). */
const GROUP_FIELDS: GroupFieldNames = { concurrency: 'c', max: 'lm', duration: 'ld', weighted: 'lwt', maxSize: 'ms', weight: 'w' };
/** The group defaults in the queue's meta (configureQueue.lua). */
const DEFAULT_FIELDS: GroupFieldNames = {
  concurrency: 'gcon',
  max: 'glm',
  duration: 'gld',
  weighted: 'glw',
  maxSize: 'gms',
  weight: 'gwt',
};
/** The queue-wide limits in the meta: global concurrency, and the rate limit (`lwt` '1': weighted). */
const QUEUE_FIELDS = { concurrency: 'gcc', max: 'lmax', duration: 'ldur', weighted: 'lwt' } as const;

/** Adds a limiter change as field pairs ('' removes the field: see includes/settings.lua). */
function limiterPairs(out: string[], limiter: LimiterSetting | null, names: { max: string; duration: string; weighted: string }): void {
  out.push(names.max, limiter === null ? '' : String(limiter.max));
  out.push(names.duration, limiter === null ? '' : String(limiter.duration));
  out.push(names.weighted, limiter?.weight === 'cost' ? '1' : '');
}

function groupPairs(out: string[], change: GroupSettingsChange, names: GroupFieldNames): void {
  for (const key of ['concurrency', 'maxSize', 'weight'] as const) {
    const value = change[key];
    if (value !== undefined) out.push(names[key], value === null ? '' : String(value));
  }
  if (change.limiter !== undefined) limiterPairs(out, change.limiter, names);
}

/** A group settings change as the field pairs configureGroup.lua takes. */
export function groupSettingPairs(change: GroupSettingsChange): string[] {
  const out: string[] = [];
  groupPairs(out, change, GROUP_FIELDS);
  return out;
}

/** A queue settings change as the meta field pairs configureQueue.lua takes. */
export function queueSettingPairs(change: QueueSettingsChange): string[] {
  const out: string[] = [];
  if (change.globalConcurrency !== undefined) {
    out.push(QUEUE_FIELDS.concurrency, change.globalConcurrency === null ? '' : String(change.globalConcurrency));
  }
  if (change.rateLimit !== undefined) limiterPairs(out, change.rateLimit, QUEUE_FIELDS);
  if (change.groupDefaults !== undefined) groupPairs(out, change.groupDefaults, DEFAULT_FIELDS);
  return out;
}

function numberOf(hash: Record<string, string>, field: string): number | undefined {
  const value = hash[field];
  return value === undefined || value === '' ? undefined : Number(value);
}

function limiterOf(hash: Record<string, string>, names: { max: string; duration: string; weighted: string }): LimiterSetting | undefined {
  const max = numberOf(hash, names.max);
  if (max === undefined) return undefined;
  const duration = Number(hash[names.duration]);
  return hash[names.weighted] === '1' ? { max, duration, weight: 'cost' } : { max, duration };
}

function groupSettingsOf(hash: Record<string, string>, names: GroupFieldNames): GroupSettingValues {
  return {
    concurrency: numberOf(hash, names.concurrency),
    limiter: limiterOf(hash, names),
    maxSize: numberOf(hash, names.maxSize),
    weight: numberOf(hash, names.weight),
  };
}

/** The queue's settings read from its meta hash. */
export function queueSettingsOf(meta: Record<string, string>): QueueSettings {
  return {
    paused: meta.paused === '1',
    maxEvents: numberOf(meta, 'maxEvents'),
    layoutVersion: meta.v,
    globalConcurrency: numberOf(meta, QUEUE_FIELDS.concurrency),
    rateLimit: limiterOf(meta, QUEUE_FIELDS),
    groupDefaults: groupSettingsOf(meta, DEFAULT_FIELDS),
  };
}
