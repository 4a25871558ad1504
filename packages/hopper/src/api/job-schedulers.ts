/**
 * Job schedulers (BullMQ's `upsertJobScheduler` family): a scheduler adds a job from its template
 * each time its schedule fires. The schedule rules are in ../schedule (pure), the fate of a due
 * occurrence in the claim script (includes/scheduler.lua), and the creation of the next ones in
 * maintenance/scheduler-tick. This module is the Queue's side: validation and the calls.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AddRequest, SchedulerRecord, SchedulerUpsertResult } from '../backend/backend.js';
import { InvalidOptionsError, InvalidScheduleError } from '../job/errors.js';
import type { Job } from '../job/job.js';
import { serialize, validateJobName, validateJobOptions, type JobsOptions } from '../job/options.js';
import { checkDeadLetterRoute } from '../job/dead-letter-route.js';
import { advanceScheduler } from '../maintenance/scheduler-tick.js';
import { nextFireTimes } from '../schedule/next-fire-times.js';
import type { LegacyRepeatOptions, RepeatOptions, ScheduleSpec } from '../schedule/repeat-options.js';
import { validateRepeat } from '../schedule/validate-repeat.js';
import type { QueueGetters } from './queue-getters.js';
import { toRepeatableJob, type RepeatableJob } from './legacy-repeat.js';
import { invalidSchedule } from '../schedule/schedule-error.js';
import { showValue } from '../validation/kit.js';

/** The job a scheduler adds at each occurrence. */
export interface JobSchedulerTemplate<DataType = unknown, NameType extends string = string> {
  /** The jobs' name (default: the scheduler id). */
  name?: NameType;
  data?: DataType;
  /** Job options for each occurrence (no jobId or delay: the scheduler sets those). */
  opts?: Omit<JobsOptions, 'jobId' | 'delay' | 'deduplication'>;
}

/**
 * A job scheduler in BullMQ's shape, as `getJobScheduler` and `getJobSchedulers` return it. The
 * repeat fields appear as given (`tz` only when one was given; `offset` is 0 for a pattern), and
 * `template` only when the scheduler's jobs have data or options. Hopper's fuller view (policies,
 * counters, paused) is {@link JobSchedulerState}, from `getJobSchedulerState`.
 */
export interface JobSchedulerJson<DataType = unknown> {
  /** The scheduler's id. */
  key: string;
  /** The jobs' name. */
  name: string;
  /** Occurrences planned so far (the `count` in each occurrence's `opts.repeat`). */
  iterationCount?: number;
  limit?: number;
  startDate?: number;
  endDate?: number;
  tz?: string;
  pattern?: string;
  every?: number;
  offset?: number;
  /** When the next occurrence is due (ms), if there is one. */
  next?: number;
  template?: { data?: DataType; opts?: JobsOptions };
}

/** A scheduler as `getJobSchedulerState` reports it: BullMQ's fields and Hopper's policies and counters. */
export interface JobSchedulerState {
  /** The scheduler's id (BullMQ calls it `key` too). */
  id: string;
  key: string;
  /** The jobs' name. */
  name: string;
  pattern?: string;
  every?: number;
  offset?: number;
  tz: string;
  startDate?: number;
  endDate?: number;
  limit?: number;
  jitter: number;
  overlap: ScheduleSpec['overlap'];
  catchup: ScheduleSpec['catchup'];
  catchupWindow: number;
  paused: boolean;
  /** When the pending occurrence is due (ms), if there is one. */
  next?: number;
  template: { name: string; data: unknown; opts: JobsOptions };
  /** Occurrences that ran (including triggered and backfilled ones). */
  fired: number;
  /** Occurrences skipped because the previous run was not finished (overlap policy). */
  skippedByOverlap: number;
  /** Occurrences not run after downtime or a pause (outside the catch-up window, or by policy). */
  missed: number;
  /** Occurrences created so far (what `limit` counts). */
  created: number;
}

/** Most instants one backfill call creates. */
export const MAX_BACKFILL = 1000;

function checkId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) {
    throw new InvalidOptionsError(`A job scheduler id must be a non-empty string of at most 200 characters, got ${showValue(id)}.`);
  }
}

interface StoredTemplate {
  name: string;
  data: string;
  opts: string;
  priority: number;
  /** JSON of the schedule's public repeat options, put on each occurrence's `opts.repeat`. */
  rep?: string;
  /** Legacy repeat `count`: the iteration number before the first occurrence (0 if none). */
  cb?: number;
  /** 1 when the template had no data (BullMQ's `getJobScheduler` then shows none). */
  nd?: 1;
}

/** The repeat fields BullMQ shows on an occurrence's `opts.repeat` (dates as epoch ms). */
const PUBLIC_REPEAT_KEYS = ['pattern', 'every', 'tz', 'limit', 'startDate', 'endDate', 'offset', 'key', 'jobId'] as const;

/** How a legacy repeatable add (queue.add with repeat) differs from a plain upsert. */
export interface LegacyUpsert {
  /** The add's repeat options, as its occurrences show them in `opts.repeat`. */
  repeat: LegacyRepeatOptions;
  /** The iteration count before the first occurrence (the add's `repeat.count`). */
  countBase: number;
}

/** The repeat options an occurrence carries in `opts.repeat`: those given, dates as epoch ms. */
function publicRepeat(repeat: LegacyRepeatOptions, spec: ScheduleSpec): string {
  const out: Record<string, unknown> = {};
  for (const key of PUBLIC_REPEAT_KEYS) {
    if (repeat[key] === undefined || repeat[key] === null) continue;
    out[key] = key === 'startDate' ? spec.startDate : key === 'endDate' ? spec.endDate : repeat[key];
  }
  return JSON.stringify(out);
}

function storeTemplate(
  id: string,
  template: JobSchedulerTemplate<unknown> | undefined,
  defaults: JobsOptions,
  backoffTypes: readonly string[],
  rep: string,
  countBase: number,
): StoredTemplate {
  const name = template?.name ?? id;
  validateJobName(name);
  const opts = (template?.opts ?? {}) as JobsOptions;
  for (const forbidden of ['jobId', 'delay', 'deduplication'] as const) {
    if (opts[forbidden] !== undefined) {
      throw new InvalidOptionsError(
        `A job scheduler's template cannot set ${forbidden}: the scheduler sets each occurrence's id and due time.`,
      );
    }
  }
  validateJobOptions(opts, backoffTypes);
  // prevMillis and repeatJobKey are each occurrence's own (BullMQ sets them likewise).
  const { jobId: _jobId, delay: _delay, prevMillis: _prev, repeatJobKey: _key, ...merged } = { ...defaults, ...opts };
  const json = JSON.stringify(merged);
  return {
    name,
    data: serialize(template?.data === undefined ? {} : template.data, 'Job scheduler data', merged.sizeLimit),
    opts: json === '{}' ? '' : json,
    priority: merged.priority ?? 0,
    rep,
    ...(countBase > 0 ? { cb: countBase } : {}),
    ...(template?.data === undefined ? { nd: 1 as const } : {}),
  };
}

/** A stored scheduler in BullMQ's `getJobScheduler` shape. */
function toJobSchedulerJson(record: SchedulerRecord): JobSchedulerJson {
  const spec = JSON.parse(record.spec) as ScheduleSpec;
  const template = JSON.parse(record.template) as StoredTemplate;
  const given = (template.rep ? JSON.parse(template.rep) : {}) as { tz?: string };
  const out: JobSchedulerJson = { key: record.id, name: template.name, iterationCount: (template.cb ?? 0) + record.created };
  if (spec.limit !== undefined) out.limit = spec.limit;
  if (spec.startDate !== undefined) out.startDate = spec.startDate;
  if (spec.endDate !== undefined) out.endDate = spec.endDate;
  if (given.tz !== undefined) out.tz = given.tz;
  if (spec.kind === 'cron') out.pattern = spec.pattern;
  else out.every = spec.every;
  out.offset = spec.kind === 'every' ? spec.offset : 0;
  if (record.nextDue !== undefined) out.next = record.nextDue;
  const shown: NonNullable<JobSchedulerJson['template']> = {};
  if (!template.nd) shown.data = JSON.parse(template.data) as unknown;
  if (template.opts) shown.opts = JSON.parse(template.opts) as JobsOptions;
  if (shown.data !== undefined || shown.opts !== undefined) out.template = shown;
  // Hopper's counters, as earlier Hopper versions returned them here: kept readable for code
  // written against those, but not enumerable, so the object compares and serializes as BullMQ's
  // (getJobSchedulerState is the typed way to read them).
  const counters = { fired: record.fired, skippedByOverlap: record.skipped, missed: record.missed, created: record.created };
  for (const [name, value] of Object.entries(counters)) Object.defineProperty(out, name, { value, enumerable: false });
  return out;
}

/** The Queue's part of job schedulers; the Queue's methods call these. */
export class JobSchedulers {
  /** Numbers trigger and backfill calls, so a call ioredis re-sends after a lost reply runs once. */
  private readonly producerId = `s${randomBytes(6).toString('base64url')}`;
  private seq = 0;

  constructor(
    private readonly queue: QueueGetters,
    private readonly defaults: () => JobsOptions,
    private readonly backoffTypes: readonly string[],
  ) {}

  private get backend() {
    return this.queue.backend;
  }

  async upsert(id: string, repeat: RepeatOptions, template?: JobSchedulerTemplate<unknown>): Promise<Job | undefined> {
    return (await this.write(id, repeat, template)).job;
  }

  /**
   * Creates or updates scheduler `id` and gives it its next occurrence. Returns the pending
   * occurrence's job and whether the scheduler was created, replaced or unchanged.
   * `legacy`: the add with repeat this comes from (queue.add), else a plain upsert. `seed`: a
   * scheduler moved from BullMQ (`hopper migrate`), created with its last instant and created
   * count so that its next occurrence is the one BullMQ had planned (an existing one is kept).
   */
  async write(
    id: string,
    repeat: RepeatOptions,
    template: JobSchedulerTemplate<unknown> | undefined,
    legacy?: LegacyUpsert,
    seed?: { last: number; created: number },
  ): Promise<{ job: Job | undefined; result: SchedulerUpsertResult }> {
    checkId(id);
    await this.queue.ready();
    const now = this.queue.clock.backendNow() ?? (await this.backend.time());
    const spec = validateRepeat(repeat, { now });
    if (legacy && spec.endDate !== undefined && spec.endDate <= now) {
      // BullMQ 5 refused it likewise; a scheduler (upsertJobScheduler) with a past end simply never fires.
      throw invalidSchedule(
        'no-run-soon',
        `End date must be greater than current timestamp: repeat.endDate is ${new Date(spec.endDate).toISOString()}.`,
      );
    }
    const rep = publicRepeat(legacy?.repeat ?? repeat, spec);
    const stored = storeTemplate(id, template, this.defaults(), this.backoffTypes, rep, legacy?.countBase ?? 0);
    checkDeadLetterRoute(this.backend, (template?.opts?.deadLetter ?? this.defaults().deadLetter)?.queue);
    const specJson = JSON.stringify(spec);
    const templateJson = JSON.stringify(stored);
    const result = await this.backend.upsertScheduler(
      {
        id,
        hash: createHash('sha1').update(specJson).update('\u0000').update(templateJson).digest('hex'),
        spec: specJson,
        template: templateJson,
        overlap: spec.overlap,
        catchup: spec.catchup,
        catchupWindow: spec.catchupWindow,
        limit: spec.limit ?? 0,
        paused: spec.paused,
        ...(seed ? { seed } : {}),
      },
      this.queue.clock.backendNow(),
    );
    await advanceScheduler(this.backend, this.queue.clock, id);
    if (repeat.immediately && spec.kind === 'cron' && result === 'created') {
      // BullMQ's immediately: a new cron schedule runs once at once, then follows its pattern.
      const now = await this.trigger(id);
      if (now) return { job: now, result };
    }
    const record = await this.backend.getScheduler(id);
    return { job: record?.pendingId ? await this.queue.getJob(record.pendingId) : undefined, result };
  }

  /** Scheduler `id` in BullMQ's shape, or undefined. */
  async get(id: string): Promise<JobSchedulerJson | undefined> {
    await this.queue.ready();
    const record = await this.backend.getScheduler(id);
    return record && toJobSchedulerJson(record);
  }

  /** Schedulers in BullMQ's shape, by next run (`asc`: soonest first), rank range `start..end`. */
  async list(start: number, end: number, asc: boolean): Promise<JobSchedulerJson[]> {
    await this.queue.ready();
    const ids = await this.backend.getSchedulerIds(start, end, asc);
    const records = await Promise.all(ids.map((id) => this.backend.getScheduler(id)));
    return records.flatMap((record) => (record ? [toJobSchedulerJson(record)] : []));
  }

  /** Scheduler `id` with Hopper's policies and counters, or undefined. */
  async state(id: string): Promise<JobSchedulerState | undefined> {
    await this.queue.ready();
    const record = await this.backend.getScheduler(id);
    if (!record) return undefined;
    const spec = JSON.parse(record.spec) as ScheduleSpec;
    const template = JSON.parse(record.template) as StoredTemplate;
    return {
      id,
      key: id,
      name: template.name,
      ...(spec.kind === 'cron' ? { pattern: spec.pattern } : { every: spec.every, offset: spec.offset }),
      tz: spec.tz,
      startDate: spec.startDate,
      endDate: spec.endDate,
      limit: spec.limit,
      jitter: spec.jitter,
      overlap: spec.overlap,
      catchup: spec.catchup,
      catchupWindow: spec.catchupWindow,
      paused: record.paused,
      next: record.nextDue,
      template: {
        name: template.name,
        data: JSON.parse(template.data) as unknown,
        opts: template.opts ? (JSON.parse(template.opts) as JobsOptions) : {},
      },
      fired: record.fired,
      skippedByOverlap: record.skipped,
      missed: record.missed,
      created: record.created,
    };
  }

  /** Schedulers with Hopper's policies and counters, by next run, rank range `start..end`. */
  async states(start: number, end: number, asc: boolean): Promise<JobSchedulerState[]> {
    await this.queue.ready();
    const ids = await this.backend.getSchedulerIds(start, end, asc);
    const infos = await Promise.all(ids.map((id) => this.state(id)));
    return infos.filter((info): info is JobSchedulerState => info !== undefined);
  }

  /** The schedulers as BullMQ 5's `getRepeatableJobs` lists them. */
  async repeatables(start: number, end: number, asc: boolean): Promise<RepeatableJob[]> {
    await this.queue.ready();
    const ids = await this.backend.getSchedulerIds(start, end, asc);
    const records = await Promise.all(ids.map((id) => this.backend.getScheduler(id)));
    return records.flatMap((record) => {
      if (!record) return [];
      const template = JSON.parse(record.template) as StoredTemplate;
      const shown = (template.rep ? JSON.parse(template.rep) : {}) as LegacyRepeatOptions;
      return [toRepeatableJob(record.id, template.name, JSON.parse(record.spec) as ScheduleSpec, shown, record.nextDue)];
    });
  }

  async count(): Promise<number> {
    await this.queue.ready();
    return this.backend.getSchedulersCount();
  }

  async remove(id: string): Promise<boolean> {
    checkId(id);
    await this.queue.ready();
    return this.backend.removeScheduler(id);
  }

  async setPaused(id: string, paused: boolean): Promise<boolean> {
    checkId(id);
    await this.queue.ready();
    const result = await this.backend.pauseScheduler(id, paused, this.queue.clock.backendNow());
    if (result === 'missing') throw new InvalidOptionsError(`No job scheduler "${id}" in queue "${this.queue.name}".`);
    if (!paused) await advanceScheduler(this.backend, this.queue.clock, id);
    return result === 'changed';
  }

  private request(): AddRequest {
    return { producerId: this.producerId, seq: ++this.seq, keep: 64 };
  }

  async trigger(id: string): Promise<Job | undefined> {
    checkId(id);
    await this.queue.ready();
    const ids = await this.backend.runScheduled(id, true, [], this.request(), this.queue.clock.backendNow());
    if (!ids) throw new InvalidOptionsError(`No job scheduler "${id}" in queue "${this.queue.name}".`);
    return ids[0] ? this.queue.getJob(ids[0]) : undefined;
  }

  async backfill(id: string, from: Date | number, to: Date | number): Promise<string[]> {
    checkId(id);
    await this.queue.ready();
    const record = await this.backend.getScheduler(id);
    if (!record) throw new InvalidOptionsError(`No job scheduler "${id}" in queue "${this.queue.name}".`);
    const start = typeof from === 'number' ? from : from.getTime();
    const end = typeof to === 'number' ? to : to.getTime();
    if (!(Number.isFinite(start) && Number.isFinite(end) && start <= end)) {
      throw new InvalidScheduleError(`backfillJobScheduler needs from <= to (dates or epoch ms), got ${String(from)} and ${String(to)}.`);
    }
    const now = this.queue.clock.backendNow() ?? (await this.backend.time());
    const spec = JSON.parse(record.spec) as ScheduleSpec;
    // Fires in [from, to], only past ones: the schedule itself will create the future ones.
    const instants = nextFireTimes(spec, { from: start - 1, count: MAX_BACKFILL + 1 }).filter((t) => t <= end && t <= now);
    if (instants.length > MAX_BACKFILL) {
      throw new InvalidScheduleError(
        `backfillJobScheduler would create more than ${MAX_BACKFILL} runs: backfill a shorter range at a time.`,
      );
    }
    const created = await this.backend.runScheduled(id, false, instants, this.request(), this.queue.clock.backendNow());
    return created ?? [];
  }
}
