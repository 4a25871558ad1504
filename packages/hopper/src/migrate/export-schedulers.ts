/**
 * Hopper's job schedulers, moved back to BullMQ job schedulers with the same ids (the way back).
 * A Hopper scheduler keeps one pending run (a delayed job) for its next instant. That run is
 * taken out of Hopper's delayed set first (exportTakePending: no Hopper worker runs it), BullMQ's
 * scheduler is written with that instant as its next occurrence (writeScheduler: the delayed job
 * `repeat:<id>:<instant>`), then Hopper's scheduler is removed and the taken run deleted. A run
 * that had already started or was due moves as a job, and BullMQ's scheduler starts at the
 * instant after it. A scheduler already in BullMQ wins. A crash at any step is finished by a
 * re-run: the taken run stays in Hopper's moving set until its scheduler is gone.
 */
import type { QueueBackend } from '../backend/backend.js';
import type { SchedulerRecord } from '../backend/records.js';
import type { RedisClient } from '../backend/redis/connection.js';
import { nextFireAfter } from '../schedule/fire-cursor.js';
import { DEFAULT_CATCHUP, DEFAULT_OVERLAP, type ScheduleSpec } from '../schedule/repeat-options.js';
import type { BullKeys } from './bullmq-keys.js';
import { runBullScript } from './bullmq-scripts.js';
import { WRITE_SCHEDULER } from './bullmq-write-scripts.js';
import type { HopperOnlyFeature } from './export-jobs.js';

/** The Hopper backend the way back reads and takes from. */
export type ExportingBackend = QueueBackend &
  Required<Pick<QueueBackend, 'exportTake' | 'exportTakePending' | 'exportPending' | 'exportRead' | 'exportFinish' | 'exportGiveBack'>>;

/** A Hopper scheduler as stored, read for the way back. */
export interface HopperScheduler {
  id: string;
  record: SchedulerRecord;
  spec: ScheduleSpec;
  template: { name: string; data: string; opts: string; priority: number; rep?: string; cb?: number; nd?: 1 };
  /** Hopper-only policies it has (jitter, overlap, catch-up, paused). */
  hopperOnly: HopperOnlyFeature[];
}

const SHORT_NAMES: Record<string, string> = { deduplication: 'de', keepLogs: 'kl', failParentOnFailure: 'fpof' };

/** Reads every job scheduler of the Hopper queue. */
export async function readHopperSchedulers(backend: QueueBackend): Promise<HopperScheduler[]> {
  const out: HopperScheduler[] = [];
  for (let start = 0; ; start += 500) {
    const ids = await backend.getSchedulerIds(start, start + 499, true);
    for (const id of ids) {
      const record = await backend.getScheduler(id);
      if (!record) continue;
      const spec = JSON.parse(record.spec) as ScheduleSpec;
      const template = JSON.parse(record.template) as HopperScheduler['template'];
      const policies =
        spec.jitter > 0 || spec.overlap !== DEFAULT_OVERLAP || spec.catchup !== DEFAULT_CATCHUP || record.paused || spec.paused;
      out.push({ id, record, spec, template, hopperOnly: policies ? ['scheduler-policies'] : [] });
    }
    if (ids.length < 500) break;
  }
  return out;
}

function bullOptions(json: string, drop: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!json) return out;
  for (const [key, value] of Object.entries(JSON.parse(json) as Record<string, unknown>)) {
    if (drop.has(key)) continue;
    out[SHORT_NAMES[key] ?? key] = value;
  }
  return out;
}

/** Hopper-only template options (a scheduler's jobs lose them in BullMQ). */
const HOPPER_TEMPLATE_OPTIONS = new Set(['group', 'deadLetter', 'cost', 'timeout', 'parent']);

/**
 * Moves scheduler `s` to BullMQ. Returns 'moved', 'exists' (BullMQ had it: kept) or 'ended' (it
 * has no instant left: removed from Hopper, nothing written).
 */
export async function moveSchedulerBack(
  backend: ExportingBackend,
  client: RedisClient,
  k: BullKeys,
  s: HopperScheduler,
  now: number,
): Promise<'moved' | 'exists' | 'ended'> {
  const { record, spec, template } = s;
  const pending = record.pendingId;
  const taken = pending !== '' && (await backend.exportTakePending(s.id, pending));
  let next: number | null;
  let count = record.created;
  if (taken && record.nextDue !== undefined) {
    next = record.nextDue;
  } else {
    // No run waiting for its time (it is due, running or done): BullMQ plans the one after.
    const after = Math.max(record.nextDue ?? Number(record.last || 0), Number(record.last || 0), now);
    next = nextFireAfter(spec, after);
    count += 1;
  }
  if (next !== null && spec.limit !== undefined && count > spec.limit) next = null;
  let outcome: 'moved' | 'exists' | 'ended' = 'ended';
  if (next !== null) {
    const given = (template.rep ? JSON.parse(template.rep) : {}) as Record<string, unknown>;
    const fields: Record<string, string> = { name: template.name, ic: String(count) };
    if (spec.kind === 'cron') fields.pattern = spec.pattern;
    else {
      fields.every = String(spec.every);
      if (spec.offset > 0) fields.offset = String(spec.offset);
    }
    if (typeof given.tz === 'string') fields.tz = given.tz;
    if (spec.limit !== undefined) fields.limit = String(spec.limit);
    if (spec.startDate !== undefined) fields.startDate = String(spec.startDate);
    if (spec.endDate !== undefined) fields.endDate = String(spec.endDate);
    const opts = bullOptions(template.opts, HOPPER_TEMPLATE_OPTIONS);
    if (Object.keys(opts).length > 0) fields.opts = JSON.stringify(opts);
    if (!template.nd) fields.data = template.data;
    const repeat: Record<string, unknown> = { ...given, count };
    if (spec.kind === 'every') repeat.offset = spec.offset;
    const jobId = `repeat:${s.id}:${next}`;
    const delay = Math.max(0, next - now);
    const occurrence = {
      n: template.name,
      d: template.data,
      o: JSON.stringify({ ...opts, repeat, jobId, delay, timestamp: now, prevMillis: next, repeatJobKey: s.id }),
      t: now,
      dl: delay,
      p: template.priority,
    };
    const written = await runBullScript(
      client,
      WRITE_SCHEDULER,
      [k.repeat, k.scheduler(s.id), k.delayed, k.marker],
      [k.base, s.id, next, JSON.stringify(fields), JSON.stringify(occurrence)],
    );
    outcome = Number(written) === 1 ? 'moved' : 'exists';
  }
  await backend.removeScheduler(s.id);
  if (taken) await backend.exportFinish([pending]);
  return outcome;
}
