/**
 * The one place where the SQLite backend turns the seam's typed settings into its own storage and
 * back: the queue row's `settings` JSON (queue-wide limits and group defaults, sqlite-limits.ts),
 * its `paused`, `max_events` and `epoch` columns, and a group row's setting columns
 * (sqlite-groups.ts).
 */
import type { GroupSettingValues, GroupSettingsChange, LimiterSetting, QueueSettings, QueueSettingsChange } from '../backend.js';
import type { QueueLimits } from './sqlite-limits.js';

type LimitKey = Exclude<keyof QueueLimits, 'limitedUntil'>;

/** Where a set of group settings lives: one key (or column) per setting, three for the limiter. */
interface SettingNames<K extends string> {
  concurrency: K;
  max: K;
  duration: K;
  /** 1 when the limiter is weighted by the jobs' cost. */
  weighted: K;
  maxSize: K;
  weight: K;
}

/** A group's own settings: the group row's columns. */
const GROUP_COLUMNS: SettingNames<string> = { concurrency: 'c', max: 'lm', duration: 'ld', weighted: 'lwt', maxSize: 'ms', weight: 'w' };
/** The group defaults in the queue row's settings. */
const DEFAULT_KEYS: SettingNames<LimitKey> = {
  concurrency: 'gcon',
  max: 'glm',
  duration: 'gld',
  weighted: 'glw',
  maxSize: 'gms',
  weight: 'gwt',
};
/** The queue-wide limits in the queue row's settings. */
const QUEUE_KEYS = { concurrency: 'gcc', max: 'lmax', duration: 'ldur', weighted: 'lwt' } as const;

/** A settings change as keys to write (`null`: remove). */
function changes<K extends string>(change: GroupSettingsChange, names: SettingNames<K>): Map<K, number | null> {
  const out = new Map<K, number | null>();
  for (const key of ['concurrency', 'maxSize', 'weight'] as const) {
    const value = change[key];
    if (value !== undefined) out.set(names[key], value);
  }
  if (change.limiter !== undefined) limiterChanges(out, change.limiter, names);
  return out;
}

function limiterChanges<K extends string>(
  out: Map<K, number | null>,
  limiter: LimiterSetting | null,
  names: { max: K; duration: K; weighted: K },
): void {
  out.set(names.max, limiter?.max ?? null);
  out.set(names.duration, limiter?.duration ?? null);
  out.set(names.weighted, limiter?.weight === 'cost' ? 1 : null);
}

/**
 * A group settings change as the column values configureGroup (sqlite-groups.ts) writes ('' removes).
 */
export function groupColumnChanges(change: GroupSettingsChange): Record<string, string> {
  const columns: Record<string, string> = {};
  for (const [column, value] of changes(change, GROUP_COLUMNS)) columns[column] = value === null ? '' : String(value);
  return columns;
}

/** Applies a queue settings change to the queue row's limits; returns the keys it changed. */
export function applyQueueChange(limits: QueueLimits, change: QueueSettingsChange): Set<LimitKey> {
  const all = new Map<LimitKey, number | null>();
  if (change.globalConcurrency !== undefined) all.set(QUEUE_KEYS.concurrency, change.globalConcurrency);
  if (change.rateLimit !== undefined) limiterChanges(all, change.rateLimit, QUEUE_KEYS);
  if (change.groupDefaults !== undefined) for (const [key, value] of changes(change.groupDefaults, DEFAULT_KEYS)) all.set(key, value);
  for (const [key, value] of all) {
    if (value === null) delete limits[key];
    else limits[key] = value;
  }
  return new Set(all.keys());
}

function limiterOf(max: number | undefined, duration: number | undefined, weighted: number | undefined): LimiterSetting | undefined {
  if (max === undefined) return undefined;
  return weighted ? { max, duration: duration ?? 0, weight: 'cost' } : { max, duration: duration ?? 0 };
}

/** The queue's settings from its row (`epoch` set: the layout version is recorded, as Redis's meta `v`) and its limits. */
export function queueSettingsOf(row: { epoch: string | null; max_events: number; paused: number }, limits: QueueLimits): QueueSettings {
  const groupDefaults: GroupSettingValues = {
    concurrency: limits.gcon,
    limiter: limiterOf(limits.glm, limits.gld, limits.glw),
    maxSize: limits.gms,
    weight: limits.gwt,
  };
  return {
    paused: row.paused === 1,
    maxEvents: row.max_events,
    layoutVersion: row.epoch ? '1' : undefined,
    globalConcurrency: limits.gcc,
    rateLimit: limiterOf(limits.lmax, limits.ldur, limits.lwt),
    groupDefaults,
  };
}
