/**
 * The read side of the SQLite backend, and its connection: the shared database, the queue's
 * row, the waits (waitForWork, readEvents: an in-process wake-up plus an adaptive poll for
 * other processes), jobs, states, counts, logs, events, workers, and the invariant audit.
 */
import type {
  Dependencies,
  EventsRead,
  JobRecord,
  MetricsRecord,
  MetricsType,
  QueueSettings,
  SchedulerRecord,
  StateCounts,
  StepRecord,
  GroupRecord,
} from '../backend.js';
import { readMetrics } from './sqlite-metrics.js';
import { JOB_STATES, isJobState, type JobState, type JobStateOrUnknown } from '../../job/states.js';
import { ClosedError, ConnectionTimeoutError } from '../../job/errors.js';
import { safeTimeout, type SafeTimer } from '../../clock/timers.js';
import { acquireStore, BUSY_TIMEOUT_MS, releaseStore, type SqliteStore } from './database.js';
import { OTHER_WRITE } from './sqlite-wake.js';
import { rankWindow, toRecord, type JobRow } from './sqlite-ops.js';
import { rateLimitTtl, readLimits } from './sqlite-limits.js';
import { queueSettingsOf } from './sqlite-settings.js';
import { decodeStep } from '../step-records.js';
import { groupIds, groupJobIds, readGroups } from './sqlite-group-reads.js';
import { checkInvariants } from './sqlite-audit.js';
import { dueSchedulers, nextSchedulerDue, readScheduler, schedulerIds, schedulersCount } from './sqlite-scheduler-reads.js';

/** How long a start may take: the busy timeout of the open's lock wait, twice (open, then migrate). */
const START_TIMEOUT_MS = 2 * BUSY_TIMEOUT_MS;

/** The adaptive poll of a wait: the first check after 1 ms, doubling up to the store's pollMaxMs. */
const POLL_FIRST_MS = 1;

/**
 * Waits until `check()` is true (then resolves true), `timeoutMs` passes (false; a negative
 * timeout waits forever), or the returned cancel function is called (false). Checks on every
 * in-process `wake` of the hub, on every write of another process (the hub's OTHER_WRITE, from
 * the wake file), and by an adaptive poll from 1 ms up to the store's pollMaxMs (the fallback).
 */
function waitUntil(
  s: SqliteStore,
  wake: string,
  check: () => boolean,
  timeoutMs: number,
): { promise: Promise<boolean>; cancel: () => void } {
  let cancel: () => void = () => undefined;
  const promise = new Promise<boolean>((resolve) => {
    let done = false;
    let delay = POLL_FIRST_MS;
    let poll: NodeJS.Timeout | undefined;
    let deadline: SafeTimer | undefined;
    const finish = (value: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(poll);
      deadline?.cancel();
      s.hub.off(wake, onWake);
      s.hub.off(OTHER_WRITE, onWake);
      resolve(value);
    };
    const test = (): boolean => {
      if (done) return true;
      let ok: boolean;
      try {
        ok = check();
      } catch {
        // The database was closed under the wait: it ends as interrupted.
        ok = false;
        finish(false);
        return true;
      }
      if (ok) finish(true);
      return ok;
    };
    const onWake = (): void => void test();
    const tick = (): void => {
      if (test()) return;
      delay = Math.min(delay * 2, s.pollMaxMs);
      poll = setTimeout(tick, delay);
    };
    cancel = () => finish(false);
    if (test()) return;
    s.hub.on(wake, onWake);
    s.hub.on(OTHER_WRITE, onWake);
    poll = setTimeout(tick, delay);
    // Chained past 2^31-1 ms, none for Infinity (a plain timer would fire at once, and a worker's
    // idle wait would end in a loop): clock/timers.ts.
    if (timeoutMs >= 0) deadline = safeTimeout(() => finish(false), timeoutMs);
  });
  return { promise, cancel };
}

function eventSeq(id: string): number {
  const n = Number(id.split('-')[0]);
  return Number.isFinite(n) ? n : 0;
}

export abstract class SqliteQueueReads {
  readonly queueName: string;
  protected readonly url: string;
  protected readonly prefix: string;
  private storePromise: Promise<SqliteStore> | undefined;
  /** The database, once open. */
  private opened: SqliteStore | undefined;
  /** Receives the loss of the database file (an `error` event of the component). */
  private readonly reportError: ((err: Error) => void) | undefined;
  private qid: number | undefined;
  private closed = false;
  /** The work signal seen by this backend's last claim: a wait ends when it changes. */
  protected seenSignal: number | undefined;
  private readonly waits = new Set<() => void>();

  constructor(options: { url: string; prefix: string; queueName: string; onConnectionError?: (err: Error) => void }) {
    this.reportError = options.onConnectionError;
    this.url = options.url;
    this.prefix = options.prefix;
    this.queueName = options.queueName;
  }

  /**
   * The shared database (opened on first use). An open that failed (a missing directory, a lock
   * held past the busy timeout) is not kept: the next call opens again.
   */
  protected store(): Promise<SqliteStore> {
    if (this.closed) return Promise.reject(new ClosedError(`The SQLite backend of queue "${this.queueName}" is closed.`));
    if (this.opened?.lost) return Promise.reject(this.opened.lost);
    if (!this.storePromise) {
      const pending = acquireStore(this.url);
      this.storePromise = pending;
      pending.then(
        (s) => {
          this.opened = s;
          // The file deleted or replaced under this process: reported once, as an `error` event.
          s.hub.once('lost', (err: Error) => {
            if (!this.closed) this.reportError?.(err);
          });
        },
        () => {
          if (this.storePromise === pending) this.storePromise = undefined;
        },
      );
    }
    return this.storePromise;
  }

  /** A start's bound: the write lock's busy timeout, and as long again for the schema's migration. */
  get startTimeoutMs(): number {
    return START_TIMEOUT_MS;
  }

  unavailable(): Error | undefined {
    return this.opened?.lost;
  }

  timeoutError(what: string, ms: number): Error {
    return new ConnectionTimeoutError(
      `${what} could not open the SQLite database ${this.url} within ${ms} ms: another process holds its write lock. ` +
        'Check for a process stuck in a long transaction; Hopper keeps trying and recovers by itself.',
    );
  }

  /** The queue's row id, created on first use. */
  protected queueId(s: SqliteStore): number {
    if (this.qid !== undefined) return this.qid;
    s.stmt('INSERT OR IGNORE INTO queues (prefix, name) VALUES (?, ?)').run(this.prefix, this.queueName);
    const row = s.stmt('SELECT qid FROM queues WHERE prefix = ? AND name = ?').get(this.prefix, this.queueName) as { qid: number };
    this.qid = row.qid;
    return row.qid;
  }

  protected readSignal(s: SqliteStore, qid: number): number {
    return (s.stmt('SELECT signal FROM queues WHERE qid = ?').get(qid) as { signal: number } | undefined)?.signal ?? 0;
  }

  private async q(): Promise<{ s: SqliteStore; qid: number }> {
    const s = await this.store();
    return { s, qid: this.queueId(s) };
  }

  async close(): Promise<void> {
    this.disconnect();
    return Promise.resolve();
  }

  disconnect(): void {
    if (this.closed) return;
    this.closed = true;
    this.interruptWait();
    this.dropReader?.();
    for (const cancel of [...this.waits]) cancel();
    for (const { s, wake, fn } of this.cancelListeners.splice(0)) s.hub.off(wake, fn);
    const pending = this.storePromise;
    if (pending) pending.then((s) => releaseStore(this.url, s)).catch(() => undefined);
  }

  onReconnect(_listener: () => void): void {
    // A SQLite database has no connection to lose.
  }

  private interrupt: (() => void) | undefined;
  private cancelListeners: { s: SqliteStore; wake: string; fn: (jobId: string) => void }[] = [];

  /** Subscribes to the in-process cancel notifications of queue `qid` (removed on close). */
  protected listenCancel(s: SqliteStore, qid: number, listener: (jobId: string) => void): void {
    const wake = `cancel:${qid}`;
    s.hub.on(wake, listener);
    this.cancelListeners.push({ s, wake, fn: listener });
  }

  /** Tells this process's workers of the queue that job `id` was cancelled while active. */
  protected async tellCancelled(id: string): Promise<void> {
    const { s, qid } = await this.q();
    s.hub.emit(`cancel:${qid}`, id);
  }

  async waitForWork(timeoutMs: number): Promise<boolean> {
    const { s, qid } = await this.q();
    const check = (): boolean => {
      const signal = this.readSignal(s, qid);
      if (this.seenSignal === undefined) this.seenSignal = signal;
      if (signal === this.seenSignal) return false;
      this.seenSignal = signal;
      return true;
    };
    const { promise, cancel } = waitUntil(s, `work:${qid}`, check, Math.max(timeoutMs, 0));
    this.interrupt = cancel;
    try {
      return await promise;
    } finally {
      if (this.interrupt === cancel) this.interrupt = undefined;
    }
  }

  interruptWait(): void {
    this.interrupt?.();
  }

  openWaitConnection(): void {
    // Waits need no connection of their own.
  }

  async readEvents(from: string, blockMs: number, count: number, checkGap: boolean): Promise<EventsRead> {
    const { s, qid } = await this.q();
    const after = eventSeq(from);
    const gap =
      checkGap && (s.stmt('SELECT events_trimmed FROM queues WHERE qid = ?').get(qid) as { events_trimmed: number }).events_trimmed > after;
    const read = (): { seq: number; event: string; fields: string }[] =>
      s.stmt('SELECT seq, event, fields FROM events WHERE qid = ? AND seq > ? ORDER BY seq LIMIT ?').all(qid, after, count) as {
        seq: number;
        event: string;
        fields: string;
      }[];
    let rows = read();
    if (rows.length === 0 && blockMs >= 0) {
      // XREAD BLOCK 0 waits for ever: so does this (until closed).
      const { promise, cancel } = waitUntil(
        s,
        `events:${qid}`,
        () => s.stmt('SELECT 1 FROM events WHERE qid = ? AND seq > ? LIMIT 1').get(qid, after) !== undefined,
        blockMs === 0 ? -1 : blockMs,
      );
      this.waits.add(cancel);
      try {
        if (await promise) rows = read();
      } finally {
        this.waits.delete(cancel);
      }
    }
    const events = rows.map((r) => ({ id: `${r.seq}-0`, event: r.event, fields: JSON.parse(r.fields) as Record<string, string> }));
    return { events, gap };
  }

  /**
   * Waits until `check()` is true (true), `timeoutMs` passes or the backend closes (false),
   * checking on each in-process `wake` of the hub and by the adaptive poll (job output streams).
   */
  protected async waitFor(s: SqliteStore, wake: string, check: () => boolean, timeoutMs: number): Promise<boolean> {
    const { promise, cancel } = waitUntil(s, wake, check, timeoutMs);
    this.waits.add(cancel);
    try {
      return await promise;
    } finally {
      this.waits.delete(cancel);
    }
  }

  async lastEventId(): Promise<string> {
    const { s, qid } = await this.q();
    const row = s.stmt('SELECT MAX(seq) AS seq FROM events WHERE qid = ?').get(qid) as { seq: number | null };
    return row.seq === null ? '0-0' : `${row.seq}-0`;
  }

  /** SQLite has no Redis client. */
  redisClient(): undefined {
    return undefined;
  }

  async getEpoch(): Promise<string> {
    const { s, qid } = await this.q();
    return (s.stmt('SELECT epoch FROM queues WHERE qid = ?').get(qid) as { epoch: string | null }).epoch ?? '';
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const [record] = await this.getJobs([id]);
    return record;
  }

  async getJobs(ids: string[]): Promise<(JobRecord | undefined)[]> {
    const { s, qid } = await this.q();
    const stmt = s.stmt(
      'SELECT j.*, pq.name AS parent_queue FROM jobs j LEFT JOIN queues pq ON pq.qid = j.parent_qid WHERE j.qid = ? AND j.id = ?',
    );
    return ids.map((id) => toRecord(stmt.get(qid, id) as JobRow | undefined));
  }

  async getState(id: string): Promise<JobStateOrUnknown> {
    const { s, qid } = await this.q();
    const row = s.stmt('SELECT state FROM jobs WHERE qid = ? AND id = ?').get(qid, id) as { state: string } | undefined;
    return row && isJobState(row.state) ? row.state : 'unknown';
  }

  async getStateCounts(): Promise<StateCounts> {
    const { s, qid } = await this.q();
    const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as StateCounts;
    for (const row of s.stmt('SELECT state, COUNT(*) AS n FROM jobs WHERE qid = ? GROUP BY state').all(qid) as {
      state: string;
      n: number;
    }[]) {
      if (isJobState(row.state)) counts[row.state] = row.n;
    }
    return counts;
  }

  async getCountsPerPriority(priorities: number[]): Promise<number[]> {
    const { s, qid } = await this.q();
    return priorities.map((p) => {
      const row =
        p === 0
          ? s.stmt("SELECT COUNT(*) AS n FROM jobs WHERE qid = ? AND state = 'waiting'").get(qid)
          : s.stmt("SELECT COUNT(*) AS n FROM jobs WHERE qid = ? AND state = 'prioritized' AND priority = ?").get(qid, p);
      return (row as { n: number }).n;
    });
  }

  async isPaused(): Promise<boolean> {
    const { s, qid } = await this.q();
    return (s.stmt('SELECT paused FROM queues WHERE qid = ?').get(qid) as { paused: number }).paused === 1;
  }

  async getLogs(id: string, start: number, end: number, asc: boolean): Promise<{ logs: string[]; count: number }> {
    const { s, qid } = await this.q();
    const { n } = s.stmt('SELECT COUNT(*) AS n FROM logs WHERE qid = ? AND job_id = ?').get(qid, id) as { n: number };
    const window = rankWindow(n, start, end);
    if (!window) return { logs: [], count: n };
    const rows = s
      .stmt(`SELECT line FROM logs WHERE qid = ? AND job_id = ? ORDER BY n ${asc ? 'ASC' : 'DESC'} LIMIT ? OFFSET ?`)
      .all(qid, id, window.limit, window.offset) as { line: string }[];
    return { logs: rows.map((r) => r.line), count: n };
  }

  async getRange(state: JobState, start: number, end: number, asc: boolean): Promise<string[]> {
    const { s, qid } = await this.q();
    let length = Number.MAX_SAFE_INTEGER;
    if (start < 0 || end < 0) {
      length = (s.stmt('SELECT COUNT(*) AS n FROM jobs WHERE qid = ? AND state = ?').get(qid, state) as { n: number }).n;
    }
    const window = rankWindow(length, start, end);
    if (!window) return [];
    // With groups, ready jobs list those without a group first, then each group's (by id), as on Redis.
    const byGroup =
      (state === 'waiting' || state === 'prioritized') && s.stmt("SELECT 1 FROM groups WHERE qid = ? AND id = ''").get(qid) !== undefined;
    const head = byGroup ? (asc ? 'grp IS NOT NULL ASC, grp ASC, ' : 'grp IS NOT NULL DESC, grp DESC, ') : '';
    const order = head + (asc ? 'score ASC, rowid ASC' : 'score DESC, rowid DESC');
    const rows = s
      .stmt(`SELECT id FROM jobs WHERE qid = ? AND state = ? ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(qid, state, window.limit, window.offset) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async getDeduplicationJobId(id: string): Promise<string | undefined> {
    const { s, qid } = await this.q();
    const row = s.stmt('SELECT job_id, expires_at FROM dedup WHERE qid = ? AND dedup_id = ?').get(qid, id) as
      { job_id: string; expires_at: number | null } | undefined;
    if (!row || (row.expires_at !== null && row.expires_at <= Date.now())) return undefined;
    return row.job_id;
  }

  async getWorkers(): Promise<{ id: string; info: string }[]> {
    const { s, qid } = await this.q();
    const rows = s.stmt('SELECT worker_id, info FROM workers WHERE qid = ? AND expires_at > ? ORDER BY worker_id').all(qid, Date.now()) as {
      worker_id: string;
      info: string;
    }[];
    return rows.map((r) => ({ id: r.worker_id, info: r.info }));
  }

  private dropReader: (() => void) | undefined;

  /** Registers this QueueEvents reader with its process's database (listed by getEventsReaders). */
  async openEventsReader(): Promise<void> {
    const { s, qid } = await this.q();
    if (this.closed || this.dropReader) return;
    this.dropReader = s.addReader(qid, `hopper:${Buffer.from(`${this.prefix}:${this.queueName}`).toString('base64url')}:qe`);
  }

  /**
   * The QueueEvents readers of this queue open in this process (a database has no connections to
   * list, unlike Redis's CLIENT LIST: another process's readers are not seen).
   */
  async getEventsReaders(): Promise<Record<string, string>[]> {
    const { s, qid } = await this.q();
    return [...(s.readers.get(qid) ?? [])].map((r) => ({ id: String(r.id), name: r.name, pid: String(process.pid) }));
  }

  async getQueueSettings(): Promise<QueueSettings> {
    const { s, qid } = await this.q();
    const row = s.stmt('SELECT epoch, max_events, paused FROM queues WHERE qid = ?').get(qid) as {
      epoch: string | null;
      max_events: number;
      paused: number;
    };
    return queueSettingsOf(row, readLimits(s, qid));
  }

  async time(): Promise<number> {
    return Promise.resolve(Date.now());
  }

  async getDependencies(id: string): Promise<Dependencies> {
    const { s, qid } = await this.q();
    const rows = s
      .stmt('SELECT child_key, pending, processed, failed, ignored FROM deps WHERE qid = ? AND id = ? ORDER BY rowid')
      .all(qid, id) as {
      child_key: string;
      pending: number;
      processed: string | null;
      failed: string | null;
      ignored: string | null;
    }[];
    const deps: Dependencies = { processed: {}, unprocessed: [], failed: {}, ignored: {} };
    for (const r of rows) {
      if (r.pending === 1) deps.unprocessed.push(r.child_key);
      if (r.processed !== null) deps.processed[r.child_key] = r.processed;
      if (r.failed !== null) deps.failed[r.child_key] = r.failed;
      if (r.ignored !== null) deps.ignored[r.child_key] = r.ignored;
    }
    return deps;
  }

  /** One page of a parent's children of one kind; the cursor is an offset ('0' starts, '0' when done). */
  async getDependencyPage(
    id: string,
    kind: keyof Dependencies,
    cursor: string,
    count: number,
  ): Promise<{ cursor: string; items: [string, string][] }> {
    const { s, qid } = await this.q();
    const column = { processed: 'processed', unprocessed: 'pending', failed: 'failed', ignored: 'ignored' }[kind];
    const where = kind === 'unprocessed' ? 'pending = 1' : `${column} IS NOT NULL`;
    const offset = Number(cursor) || 0;
    const rows = s
      .stmt(`SELECT child_key, ${column} AS value FROM deps WHERE qid = ? AND id = ? AND ${where} ORDER BY rowid LIMIT ? OFFSET ?`)
      .all(qid, id, count, offset) as { child_key: string; value: string | number }[];
    const items = rows.map((r): [string, string] => [r.child_key, kind === 'unprocessed' ? '' : String(r.value)]);
    return { cursor: rows.length < count ? '0' : String(offset + rows.length), items };
  }

  async getDependencyCounts(id: string): Promise<{ processed: number; unprocessed: number; failed: number; ignored: number }> {
    const { s, qid } = await this.q();
    const row = s
      .stmt(
        `SELECT COUNT(processed) AS processed, COALESCE(SUM(pending), 0) AS unprocessed, COUNT(failed) AS failed, COUNT(ignored) AS ignored
         FROM deps WHERE qid = ? AND id = ?`,
      )
      .get(qid, id) as { processed: number; unprocessed: number; failed: number; ignored: number };
    return { ...row };
  }

  // Reads of features the SQLite backend does not write yet: nothing of them can exist.
  async getSteps(id: string): Promise<Record<string, StepRecord>> {
    const { s, qid } = await this.q();
    const rows = s.stmt('SELECT key, record FROM steps WHERE qid = ? AND job_id = ?').all(qid, id) as { key: string; record: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, decodeStep(r.record)]));
  }

  async getStep(id: string, key: string): Promise<StepRecord | undefined> {
    const { s, qid } = await this.q();
    const row = s.stmt('SELECT record FROM steps WHERE qid = ? AND job_id = ? AND key = ?').get(qid, id, key) as
      { record: string } | undefined;
    return row && decodeStep(row.record);
  }
  async getGroups(start: number, end: number): Promise<GroupRecord[]> {
    const { s, qid } = await this.q();
    const ids = groupIds(s, qid);
    const to = end < 0 ? ids.length + end : end;
    return readGroups(s, qid, ids.slice(start < 0 ? Math.max(ids.length + start, 0) : start, to + 1));
  }
  async getGroup(id: string): Promise<GroupRecord | undefined> {
    const { s, qid } = await this.q();
    return readGroups(s, qid, [id])[0];
  }
  async getGroupsCount(): Promise<number> {
    const { s, qid } = await this.q();
    return readGroups(s, qid, groupIds(s, qid)).length;
  }
  async getGroupJobIds(id: string, start: number, end: number): Promise<string[]> {
    const { s, qid } = await this.q();
    return groupJobIds(s, qid, id, start, end);
  }
  async getRateLimitTtl(maxJobs?: number): Promise<number> {
    const { s, qid } = await this.q();
    return rateLimitTtl(s, qid, Date.now(), maxJobs);
  }
  async getScheduler(id: string): Promise<SchedulerRecord | undefined> {
    const { s, qid } = await this.q();
    return readScheduler(s, qid, id);
  }
  async getSchedulerIds(start: number, end: number, asc: boolean): Promise<string[]> {
    const { s, qid } = await this.q();
    return schedulerIds(s, qid, start, end, asc);
  }
  async getSchedulersCount(): Promise<number> {
    const { s, qid } = await this.q();
    return schedulersCount(s, qid);
  }
  async nextSchedulerDue(): Promise<number | null> {
    const { s, qid } = await this.q();
    return nextSchedulerDue(s, qid);
  }
  async getDueSchedulers(limit: number, now: number): Promise<string[]> {
    const { s, qid } = await this.q();
    return dueSchedulers(s, qid, limit, now);
  }
  async getMetrics(type: MetricsType, start: number, end: number): Promise<MetricsRecord> {
    const { s, qid } = await this.q();
    return readMetrics(s, qid, type, start, end);
  }

  /** The invariant audit, SQLite form (sqlite-audit.ts). */
  async checkInvariants(): Promise<string[]> {
    const { s, qid } = await this.q();
    return checkInvariants(s, qid);
  }
}
