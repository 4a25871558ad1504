/**
 * One scrape's reading of a Hopper deployment: for each queue, its job counts, oldest waiting age,
 * workers and their configured concurrency, exact counters and histograms (aggregated in Redis by
 * the scripts and the workers), schedulers with their counters and last run; and the Redis
 * server's memory facts. Everything goes through Hopper's Admin and Queue API.
 */
import {
  BackendUnsupportedError,
  JOB_STATES,
  type Admin,
  type ExactMetrics,
  type JobSchedulerState,
  type JobState,
  type SchedulerLastRun,
} from 'hopper-queue';

/** Most schedulers exported per queue (the others are left out; a doc'd bound on label cardinality). */
export const MAX_SCHEDULERS = 50;

/** What one queue looks like at scrape time. */
export interface QueueSnapshot {
  name: string;
  paused: boolean;
  counts: Record<JobState, number>;
  /** Seconds since the oldest waiting job became ready; 0 when none waits. */
  oldestWaitingSeconds: number;
  /** Jobs waiting in this queue when it is a dead-letter queue (its oldest waiting job is a dead letter), else 0. */
  deadLetters: number;
  workers: number;
  /** The sum of the registered workers' concurrency. */
  concurrency: number;
  exact: ExactMetrics;
  schedulers: JobSchedulerState[];
  lastRuns: Map<string, SchedulerLastRun>;
  /** Groups (only when asked): the top N by backlog. */
  groups: { id: string; waiting: number; prioritized: number; active: number }[];
}

/** The Redis server's memory facts (from INFO). */
export interface RedisSnapshot {
  usedMemory?: number;
  maxMemory?: number;
  fragmentationRatio?: number;
  evictedKeys?: number;
  rejectedConnections?: number;
  connectedClients?: number;
}

export interface Snapshot {
  queues: QueueSnapshot[];
  redis: RedisSnapshot;
  /**
   * Why this reading is incomplete (`hopper_scrape_error` is 1): a part that failed (the message
   * of its error) or did not answer within scrapeTimeoutMs; undefined when complete.
   */
  error?: string;
}

/**
 * Reads the named queues (or every queue under the Admin's prefix) and the server, each part
 * within `deadline`: a part that fails or is still pending then is left out and named in `error`,
 * so a scrape always answers with what is known (never after the deadline, never a 503).
 */
export async function readSnapshot(
  admin: Admin,
  names: string[] | undefined,
  groupsTop: number,
  deadline: Promise<void>,
): Promise<Snapshot> {
  const missed: string[] = [];
  const part = async <T>(what: string, promise: Promise<T>): Promise<T | undefined> => {
    const late = deadline.then(() => LATE);
    const result = await Promise.race([promise, late]).catch((err: unknown) => {
      missed.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    });
    if (result === LATE) {
      missed.push(`${what}: no answer within scrapeTimeoutMs`);
      return undefined;
    }
    return result as T | undefined;
  };
  const infoRead = part('the server', serverInfo(admin));
  const all = await part('the list of queues', admin.listQueues());
  const wanted = all === undefined ? [] : names ? names.filter((n) => all.includes(n)) : all;
  const [queues, info] = await Promise.all([
    Promise.all(wanted.map((name) => part(`queue ${name}`, readQueue(admin, name, groupsTop)))),
    infoRead,
  ]);
  return {
    queues: queues.filter((q): q is QueueSnapshot => q !== undefined),
    redis: info === undefined ? {} : parseRedisInfo(info),
    error: missed.length > 0 ? missed.join('; ') : undefined,
  };
}

/** What a part still pending at the deadline resolves to. */
const LATE = Symbol('late');

/** The server's INFO text; empty on a backend without one (SQLite: the Redis families are then left out). */
async function serverInfo(admin: Admin): Promise<string> {
  try {
    return await admin.redisInfo();
  } catch (err) {
    if (err instanceof BackendUnsupportedError) return '';
    throw err;
  }
}

async function readQueue(admin: Admin, name: string, groupsTop: number): Promise<QueueSnapshot> {
  const queue = await admin.queue(name);
  const [raw, paused, workers, exact, oldest, schedulers, groups] = await Promise.all([
    queue.getJobCounts(...JOB_STATES),
    queue.isPaused(),
    queue.getWorkers(),
    queue.getExactMetrics(),
    queue.getJobs('waiting', 0, 0, true),
    queue.getJobSchedulerStates(0, MAX_SCHEDULERS - 1, true),
    // At most the first 1,000 groups are read per scrape (a bound on the scrape's cost).
    groupsTop > 0 ? queue.getGroups(0, 999) : Promise.resolve([]),
  ]);
  const counts = Object.fromEntries(JOB_STATES.map((state) => [state, raw[state] ?? 0])) as Record<JobState, number>;
  const head = oldest[0];
  // The age counts from when the job became ready (added plus its delay); Redis's clock is not
  // read here, so a skew between this host and Redis shows in this gauge.
  const readySince = head ? head.timestamp + (head.delay > 0 ? head.delay : 0) : 0;
  return {
    name,
    paused,
    counts,
    oldestWaitingSeconds: head ? Math.max(0, Date.now() - readySince) / 1000 : 0,
    deadLetters: head?.deadLetterOrigin ? counts.waiting + counts.prioritized : 0,
    workers: workers.length,
    concurrency: workers.reduce((sum, w) => sum + (w.concurrency ?? 1), 0),
    exact,
    schedulers,
    lastRuns: new Map(exact.lastRuns.map((r) => [r.scheduler, r])),
    groups: groups
      .map((g) => ({ id: g.id, waiting: g.waiting, prioritized: g.prioritized, active: g.active }))
      .sort((a, b) => b.waiting + b.prioritized + b.active - (a.waiting + a.prioritized + a.active) || (a.id < b.id ? -1 : 1))
      .slice(0, groupsTop),
  };
}

/** Reads the memory facts out of Redis's INFO text. */
export function parseRedisInfo(info: string): RedisSnapshot {
  const fields = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const sep = line.indexOf(':');
    if (sep > 0 && !line.startsWith('#')) fields.set(line.slice(0, sep), line.slice(sep + 1).trim());
  }
  const num = (key: string) => {
    const value = fields.get(key);
    if (value === undefined) return undefined;
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  };
  return {
    usedMemory: num('used_memory'),
    maxMemory: num('maxmemory'),
    fragmentationRatio: num('mem_fragmentation_ratio'),
    evictedKeys: num('evicted_keys'),
    rejectedConnections: num('rejected_connections'),
    connectedClients: num('connected_clients'),
  };
}
