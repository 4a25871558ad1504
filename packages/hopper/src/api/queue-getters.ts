/**
 * The read side of a Queue (BullMQ's QueueGetters): jobs by state, counts, logs, workers, meta.
 */
import type { QueueBackend, StateCounts } from '../backend/backend.js';
import type { JobJsonRaw } from '../job/job-json.js';
import { parseJobKey } from '../job/job-key.js';
import { Job } from '../job/job.js';
import { JOB_STATES, type JobCountType, type JobState, type JobStateOrUnknown } from '../job/states.js';
import { InvalidOptionsError } from '../job/errors.js';
import { MAX_PRIORITY } from '../job/options.js';
import { checkStateNames } from '../validation/arguments.js';
import { QueueBase } from './queue-base.js';
import { showValue } from '../validation/kit.js';

/** A state name as BullMQ's getters take it: the states, plus `wait` and `paused` (both meaning waiting here). */
export type JobType = JobCountType;

/** A live worker of the queue, from its heartbeat. */
export interface WorkerInfo {
  /** The worker's id (its lock tokens start with it). */
  id: string;
  /** The worker's `name` option, if set. */
  name?: string;
  hostname?: string;
  pid?: number;
  concurrency?: number;
  /** When the worker started (ms). */
  startedAt?: number;
  /**
   * The Redis client id (`CLIENT ID`) of the worker's command connection, what BullMQ's
   * `getWorkers()` reports as `id` (for `CLIENT KILL ID`, or to match `CLIENT LIST`); it changes
   * when the connection is reopened. Only when the worker opened that connection itself (from
   * connection options or a URL): absent for an ioredis instance passed in (it may serve other
   * components too), on SQLite, on Redis Cluster, and where the server refuses `CLIENT ID`.
   */
  clientId?: string;
  /**
   * BullMQ's connection name of the worker: `<prefix>:<queue>`, or `<prefix>:<queue>:w:<name>`
   * for a named worker (so `rawname.split(':').pop()` is the worker's name, as in BullMQ).
   */
  rawname: string;
}

/** The queue's settings as stored (BullMQ's `getMeta` fields). */
export interface QueueMeta {
  paused: boolean;
  /** The events stream cap. */
  maxLenEvents?: number;
  /** The key layout version, as `hopper:<n>` (BullMQ: the library that wrote the queue, `bullmq:<version>`). */
  version?: string;
  /** The global concurrency (`setGlobalConcurrency`), if set. */
  concurrency?: number;
  /** The global rate limit (`setGlobalRateLimit`): at most `max` jobs started per `duration` ms, if set. */
  max?: number;
  duration?: number;
}

/** Normalises BullMQ's state names to Hopper's states (deduplicated, order kept). */
export function normaliseTypes(types: JobType | JobType[] | undefined): JobState[] {
  const list = types === undefined ? [...JOB_STATES] : Array.isArray(types) ? types : [types];
  const states: JobState[] = [];
  for (const type of list.length === 0 ? [...JOB_STATES] : list) {
    if (type === 'repeat') continue; // BullMQ's legacy repeatable jobs: none in Hopper
    const state: JobState = type === 'wait' || type === 'paused' ? 'waiting' : type;
    if (!(JOB_STATES as readonly string[]).includes(state)) {
      throw new InvalidOptionsError(`Unknown job state "${String(type)}": use one of ${JOB_STATES.join(', ')} (or wait, paused).`);
    }
    if (!states.includes(state)) states.push(state);
  }
  return states;
}

function countOf(counts: StateCounts, type: JobCountType): number {
  if (type === 'wait') return counts.waiting;
  if (type === 'paused' || type === 'repeat') return 0;
  return counts[type] ?? 0;
}

// `any` defaults keep BullMQ's generic signature.
/* eslint-disable @typescript-eslint/no-explicit-any */
export abstract class QueueGetters<DataType = any, ResultType = any, NameType extends string = string> extends QueueBase {
  /* eslint-enable @typescript-eslint/no-explicit-any */

  /** The job with this id, or undefined if it does not exist. */
  async getJob(jobId: string): Promise<Job<DataType, ResultType, NameType> | undefined> {
    await this.ready();
    const record = await this.backend.getJob(String(jobId));
    return record ? Job.fromRecord<DataType, ResultType, NameType>(this, record) : undefined;
  }

  /** The state of job `jobId`, or 'unknown' if it does not exist (BullMQ's `getJobState`). */
  async getJobState(jobId: string): Promise<JobStateOrUnknown> {
    await this.ready();
    return this.backend.getState(String(jobId));
  }

  /**
   * Jobs in the given states, by rank range `start..end` (inclusive, -1 = last) within each state,
   * newest first unless `asc`. Waiting jobs are ordered by their place in line, finished ones by
   * finish time, delayed ones by due time.
   *
   * @example const recentFailures = await queue.getJobs(['failed'], 0, 49);
   */
  async getJobs(types?: JobType | JobType[], start = 0, end = -1, asc = false): Promise<Job<DataType, ResultType, NameType>[]> {
    await this.ready();
    const ids: string[] = [];
    const seen = new Set<string>();
    for (const state of normaliseTypes(types)) {
      for (const id of await this.backend.getRange(state, start, end, asc)) {
        if (!seen.has(id)) {
          seen.add(id);
          ids.push(id);
        }
      }
    }
    return this.jobsByIds(ids);
  }

  /** The jobs with these ids, in order (missing ones left out). */
  protected async jobsByIds(ids: string[]): Promise<Job<DataType, ResultType, NameType>[]> {
    const records = await this.backend.getJobs(ids);
    const jobs: Job<DataType, ResultType, NameType>[] = [];
    for (const record of records) if (record) jobs.push(Job.fromRecord<DataType, ResultType, NameType>(this, record));
    return jobs;
  }

  /**
   * Counts jobs per state. With no argument, every state; `wait` is BullMQ's alias of `waiting`,
   * and `paused` is always 0 (pausing a queue does not move its jobs).
   *
   * @example const { waiting, active, failed } = await queue.getJobCounts();
   */
  async getJobCounts(...types: JobCountType[]): Promise<Record<string, number>> {
    checkStateNames(types.flat(), 'getJobCounts');
    await this.ready();
    const counts = await this.backend.getStateCounts();
    const wanted = types.flat().length > 0 ? types.flat() : (Object.keys(counts) as JobCountType[]);
    const out: Record<string, number> = {};
    for (const type of wanted) out[type] = countOf(counts, type);
    return out;
  }

  /** The number of jobs in all the given states together. */
  async getJobCountByTypes(...types: JobCountType[]): Promise<number> {
    const wanted = types.flat();
    checkStateNames(wanted, 'getJobCountByTypes');
    if (wanted.length > 0 && wanted.every((t) => t === 'repeat' || t === 'paused')) return 0;
    const counts = await this.getJobCounts(...normaliseTypes(wanted));
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  /** Jobs still to be processed: waiting, prioritized, delayed and waiting for children. */
  count(): Promise<number> {
    return this.getJobCountByTypes('waiting', 'delayed', 'prioritized', 'waiting-children');
  }

  /** Waiting jobs, next to run first. */
  getWaiting(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['waiting'], start, end, true);
  }

  /** Jobs waiting for their children. */
  getWaitingChildren(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['waiting-children'], start, end, true);
  }

  /** Active jobs. */
  getActive(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['active'], start, end, true);
  }

  /** Delayed jobs, earliest due first. */
  getDelayed(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['delayed'], start, end, true);
  }

  /** Prioritized jobs, next to run first. */
  getPrioritized(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['prioritized'], start, end, true);
  }

  /** Completed jobs, most recent first. */
  getCompleted(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['completed'], start, end, false);
  }

  /** Failed jobs, most recent first. */
  getFailed(start = 0, end = -1): Promise<Job<DataType, ResultType, NameType>[]> {
    return this.getJobs(['failed'], start, end, false);
  }

  getWaitingCount(): Promise<number> {
    return this.getJobCountByTypes('waiting');
  }

  getWaitingChildrenCount(): Promise<number> {
    return this.getJobCountByTypes('waiting-children');
  }

  getActiveCount(): Promise<number> {
    return this.getJobCountByTypes('active');
  }

  getDelayedCount(): Promise<number> {
    return this.getJobCountByTypes('delayed');
  }

  getPrioritizedCount(): Promise<number> {
    return this.getJobCountByTypes('prioritized');
  }

  getCompletedCount(): Promise<number> {
    return this.getJobCountByTypes('completed');
  }

  getFailedCount(): Promise<number> {
    return this.getJobCountByTypes('failed');
  }

  /** A job's log lines in `start..end` (oldest first unless `asc` is false), and how many there are. */
  async getJobLogs(jobId: string, start = 0, end = -1, asc = true): Promise<{ logs: string[]; count: number }> {
    await this.ready();
    return this.backend.getLogs(jobId, start, end, asc);
  }

  /**
   * The number of ready jobs (waiting or prioritized) of each given priority, keyed by priority
   * (as BullMQ): `{ '0': 11, '1': 10 }`. Priority 0 counts the waiting jobs. A paused queue's
   * jobs are counted too (Hopper keeps them waiting).
   */
  async getCountsPerPriority(priorities: number[]): Promise<Record<string, number>> {
    const unique = [...new Set(priorities)];
    for (const p of unique) {
      if (!(Number.isInteger(p) && p >= 0 && p <= MAX_PRIORITY))
        throw new InvalidOptionsError(`getCountsPerPriority: each priority must be an integer from 0 to ${MAX_PRIORITY}, got ${p}.`);
    }
    await this.ready();
    const counts = await this.backend.getCountsPerPriority(unique);
    const out: Record<string, number> = {};
    unique.forEach((p, i) => (out[String(p)] = counts[i]));
    return out;
  }

  /**
   * One page of a parent's children (BullMQ's `queue.getDependencies`): `pending` (not finished
   * yet) or `processed` (completed, with their return values), from `start` to `end` inclusive
   * (`-1` is the last). `items` name each child by its public key (`id`, plus `v`, the return
   * value as JSON, for processed ones); `jobs` are the children still stored, as `asJSON()` plus
   * `parent`/`parentKey`; `total` counts them all. The order is the storage's (a set and a hash),
   * stable while they do not change. Children that failed for good: `job.getDependencies()`.
   */
  async getDependencies(
    parentId: string,
    type: 'processed' | 'pending',
    start = 0,
    end = -1,
  ): Promise<{ items: { id: string; v?: string }[]; jobs: (JobJsonRaw & { parent?: string; parentKey?: string })[]; total: number }> {
    if (type !== 'processed' && type !== 'pending')
      throw new InvalidOptionsError(`getDependencies: type must be 'processed' or 'pending', got ${showValue(type)}.`);
    if (!Number.isInteger(start) || !Number.isInteger(end))
      throw new InvalidOptionsError(`getDependencies: start and end must be integers, got ${start} and ${end}.`);
    await this.ready();
    const kind = type === 'processed' ? 'processed' : 'unprocessed';
    const all: [string, string][] = [];
    let cursor = '0';
    do {
      const page = await this.backend.getDependencyPage(parentId, kind, cursor, 1000);
      all.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== '0');
    const total = all.length;
    const from = start < 0 ? Math.max(total + start, 0) : start;
    const to = end < 0 ? total + end : Math.min(end, total - 1);
    const slice = from <= to ? all.slice(from, to + 1) : [];
    const items = slice.map(([id, v]) => (kind === 'processed' ? { id, v } : { id }));
    const siblings = new Map<string, QueueBackend>([[this.name, this.backend]]);
    const jobs: (JobJsonRaw & { parent?: string; parentKey?: string })[] = [];
    for (const [key] of slice) {
      const ref = parseJobKey(this.prefix, key);
      if (!ref) continue;
      let backend = siblings.get(ref.queue);
      if (!backend) siblings.set(ref.queue, (backend = this.backend.sibling(ref.queue)));
      const record = await backend.getJob(ref.id);
      if (!record) continue;
      const job = Job.fromRecord(
        ref.queue === this.name
          ? this
          : { backend, queueName: ref.queue, prefix: this.prefix, ready: () => this.ready(), clock: this.clock },
        record,
      );
      jobs.push({ ...job.asJSON(), parent: job.parent ? JSON.stringify(job.parent) : undefined, parentKey: job.parentKey });
    }
    return { items, jobs, total };
  }

  /** The id of the job a deduplication id currently points to, if any. */
  async getDeduplicationJobId(deduplicationId: string): Promise<string | undefined> {
    await this.ready();
    return this.backend.getDeduplicationJobId(deduplicationId);
  }

  /**
   * The workers of this queue that are alive, from any process: each worker registers when it is
   * ready (running or not, manual workers included) and stays listed while its heartbeat is recent
   * (about twice its lock renewal interval), until it closes. BullMQ lists Redis connections
   * instead (`CLIENT LIST`); here `name` is the worker's `name` option and `rawname` follows
   * BullMQ's connection name.
   */
  async getWorkers(): Promise<WorkerInfo[]> {
    await this.ready();
    const workers = await this.backend.getWorkers();
    const base = `${this.prefix}:${this.name}`;
    return workers.map(({ id, info }) => {
      const described = JSON.parse(info) as Omit<WorkerInfo, 'id' | 'rawname'>;
      return { ...described, id, rawname: described.name === undefined ? base : `${base}:w:${described.name}` };
    });
  }

  /**
   * The QueueEvents reading this queue's events now, one entry per connection as Redis's CLIENT
   * LIST shows it (`id`, `addr`, `age`, ...), with `name` the queue's name and `rawname` the
   * connection's (as BullMQ). With Redis Cluster, every master is asked. Managed services that
   * refuse CLIENT LIST make this reject.
   */
  async getQueueEvents(): Promise<Record<string, string>[]> {
    await this.ready();
    const readers = await this.backend.getEventsReaders();
    return readers.map((client) => ({ ...client, name: this.name, rawname: client.name }));
  }

  /** How many workers of this queue are alive. */
  async getWorkersCount(): Promise<number> {
    return (await this.getWorkers()).length;
  }

  /**
   * The queue's settings as stored: paused, events cap, layout version, and the global
   * concurrency and rate limit when set (fields left out when unset, as in BullMQ).
   */
  async getMeta(): Promise<QueueMeta> {
    await this.ready();
    const settings = await this.backend.getQueueSettings();
    const result: QueueMeta = {
      paused: settings.paused,
      maxLenEvents: settings.maxEvents,
      version: settings.layoutVersion === undefined ? undefined : `hopper:${settings.layoutVersion}`,
    };
    if (settings.globalConcurrency !== undefined) result.concurrency = settings.globalConcurrency;
    if (settings.rateLimit !== undefined) {
      result.max = settings.rateLimit.max;
      result.duration = settings.rateLimit.duration;
    }
    return result;
  }

  /** The key layout version of the queue's data (`hopper:<n>`). */
  async getVersion(): Promise<string | undefined> {
    return (await this.getMeta()).version;
  }

  /** Whether the queue is paused. */
  async isPaused(): Promise<boolean> {
    await this.ready();
    return this.backend.isPaused();
  }
}
