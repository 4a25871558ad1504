/**
 * The Redis implementation of the backend seam: each operation is one Lua script call (see
 * scripts/), reads are plain commands. Connections: one command client (borrowed or owned) and
 * lazily opened blocking clients for idle waits and event reads.
 */
import type {
  AckResult,
  AddOutcome,
  AddRequest,
  AddResult,
  ClaimRequest,
  ClaimResult,
  ClaimedJob,
  CleanableState,
  Completion,
  EventsRead,
  Failure,
  Fence,
  JobRecord,
  NewJob,
  QueueBackend,
  RescueOptions,
  RescueResult,
  Retention,
  ServerInfo,
  StateCounts,
  WriteCode,
} from '../backend.js';
import { isJobState, type JobState, type JobStateOrUnknown } from '../../job/states.js';
import {
  closeClient,
  duplicateClient,
  openClient,
  reportErrors,
  type ClientHandle,
  type ConnectionOptions,
  type RedisClient,
} from './connection.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';
import { checkQueueInvariants } from './invariants.js';

/** Version of the key layout, recorded in each queue's meta hash. */
export const LAYOUT_VERSION = '1';

type Reply = (string | number | null)[];

export interface RedisBackendOptions {
  connection?: ConnectionOptions;
  prefix: string;
  queueName: string;
  /** 'worker' connections ride out reconnects; 'command' is for producers. */
  role: 'command' | 'worker';
  /** Receives connection errors of the clients the backend owns (once per outage). */
  onConnectionError?: (err: Error) => void;
}

function timeArg(now: number | undefined): string | number {
  return now === undefined ? '' : now;
}

function retentionSpec(keep: Retention): string {
  if (keep.kind === 'keep') return 'k';
  if (keep.kind === 'remove') return 'r';
  return `c${keep.count}a${keep.ageMs}`;
}

/** Parses the claim part of a reply starting at `at`. */
function parseClaim(reply: Reply, at: number, now: number, request: ClaimRequest): ClaimResult {
  const paused = reply[at] === 1;
  const nextDue = Number(reply[at + 1]);
  const limitedFor = Number(reply[at + 2]);
  const n = Number(reply[at + 3]);
  const jobs = new Array<ClaimedJob>(n);
  const { tokenPrefix, exact } = request;
  for (let i = 0; i < n; i++) {
    const row = reply[at + 4 + i] as unknown as (string | null)[];
    jobs[i] = {
      id: row[9] as string,
      name: row[0] as string,
      data: row[1] as string,
      opts: row[2] ?? '',
      timestamp: Number(row[3] ?? 0),
      attemptsMade: Number(row[4] ?? 0),
      attemptsStarted: Number(row[5]),
      priority: Number(row[6] ?? 0),
      delay: Number(row[7] ?? 0),
      progress: row[8] ?? '',
      token: exact ? tokenPrefix : tokenPrefix + (i + 1),
    };
  }
  return { now, paused, nextDue: nextDue >= 0 ? nextDue : null, limitedFor, jobs };
}

function toNumber(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Number(value);
}

/** Data stored in 64-byte fields d1..dN of the job hash (see includes/base.lua), if any. */
function chunkedData(hash: Record<string, string>): string | undefined {
  if (hash.dc === undefined) return undefined;
  let data = '';
  for (let i = 1; i <= Number(hash.dc); i++) data += hash[`d${i}`] ?? '';
  return data;
}

/** Builds a JobRecord from a job hash (and its separate data string); undefined if the job is gone. */
function toRecord(id: string, hash: Record<string, string> | null, bigData: string | null): JobRecord | undefined {
  if (!hash || hash.n === undefined) return undefined;
  return {
    id,
    name: hash.n,
    data: hash.d ?? chunkedData(hash) ?? bigData ?? 'null',
    opts: hash.o,
    state: hash.s !== undefined && isJobState(hash.s) ? hash.s : undefined,
    timestamp: Number(hash.t ?? 0),
    attemptsMade: Number(hash.am ?? 0),
    attemptsStarted: Number(hash.as ?? 0),
    stalledCounter: Number(hash.sc ?? 0),
    priority: Number(hash.p ?? 0),
    delay: Number(hash.dl ?? 0),
    progress: hash.pg,
    processedOn: toNumber(hash.po),
    finishedOn: toNumber(hash.fo),
    returnvalue: hash.rv,
    failedReason: hash.fr,
    stacktrace: hash.st,
    token: hash.tk,
    deduplicationId: hash.de,
  };
}

/** Compares two stream ids ('ms-seq'). */
function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am !== bm ? am - bm : (as ?? 0) - (bs ?? 0);
}

export class RedisQueueBackend implements QueueBackend {
  readonly queueName: string;
  readonly keys: QueueKeys;
  private readonly handle: ClientHandle;
  private readonly client: RedisClient;
  private waitClient: RedisClient | undefined;
  private eventsClient: RedisClient | undefined;
  private readonly reportError: (err: Error) => void;

  constructor(options: RedisBackendOptions) {
    this.queueName = options.queueName;
    this.keys = queueKeys(options.prefix, options.queueName);
    this.handle = openClient(options.connection, options.role);
    this.client = this.handle.client;
    this.reportError = options.onConnectionError ?? (() => undefined);
    // A client the user passed in reports its errors to the user; ours report to the component.
    if (this.handle.owned) reportErrors(this.client, this.reportError);
  }

  private blockingClient(): RedisClient {
    const client = duplicateClient(this.client, 'blocking');
    reportErrors(client, this.reportError);
    return client;
  }

  async connect(): Promise<ServerInfo> {
    const info = String(await this.client.call('INFO', ['server']));
    const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? '0.0.0';
    let maxmemoryPolicy: string | undefined;
    try {
      const memory = String(await this.client.call('INFO', ['memory']));
      maxmemoryPolicy = /maxmemory_policy:([^\r\n]+)/.exec(memory)?.[1];
    } catch {
      maxmemoryPolicy = undefined;
    }
    return { version, maxmemoryPolicy };
  }

  async initQueue(settings: { maxEvents: number; epoch: string }): Promise<{ epoch: string; created: boolean }> {
    const [epoch, created] = (await runScript(
      this.client,
      SCRIPTS.initQueue,
      { meta: this.keys.meta },
      { maxEvents: settings.maxEvents, layoutVersion: LAYOUT_VERSION, epoch: settings.epoch },
    )) as [string, number];
    return { epoch, created: created === 1 };
  }

  async getEpoch(): Promise<string> {
    return (await this.client.hget(this.keys.meta, 'epoch')) ?? '';
  }

  async close(): Promise<void> {
    this.interruptWait();
    this.eventsClient?.disconnect();
    this.eventsClient = undefined;
    await closeClient(this.handle);
  }

  disconnect(): void {
    this.interruptWait();
    this.eventsClient?.disconnect();
    if (this.handle.owned) this.client.disconnect();
  }

  onReconnect(listener: () => void): void {
    let seenReady = this.client.status === 'ready';
    this.client.on('ready', () => {
      if (seenReady) listener();
      seenReady = true;
    });
  }

  async addJobs(jobs: NewJob[], request: AddRequest | undefined, now?: number): Promise<AddResult> {
    const k = this.keys;
    const rest: (string | number)[] = [];
    for (const job of jobs) {
      const d = job.dedup;
      rest.push(
        job.name,
        job.data,
        job.opts,
        job.customId,
        job.priority,
        job.delay,
        job.lifo ? 1 : 0,
        job.timestamp,
        d ? d.id : '',
        d ? d.ttl : 0,
        d?.extend ? 1 : 0,
        d?.replace ? 1 : 0,
      );
    }
    const reply = (await runScript(
      this.client,
      SCRIPTS.addJobs,
      {
        meta: k.meta,
        id: k.id,
        wait: k.wait,
        prio: k.prio,
        prioCounter: k.prioCounter,
        delayed: k.delayed,
        events: k.events,
        marker: k.marker,
        requests: k.requests(request?.producerId ?? '-'),
      },
      { now: timeArg(now), base: k.base, seq: request ? request.seq : '', keep: request ? request.keep : 0 },
      rest,
    )) as Reply;
    const ids: string[] = [];
    const outcomes: AddOutcome[] = [];
    for (let i = 2; i < reply.length; i += 2) {
      ids.push(String(reply[i]));
      outcomes.push(reply[i + 1] === 1 ? 'duplicated' : reply[i + 1] === 2 ? 'deduplicated' : 'added');
    }
    return { now: Number(reply[0]), epoch: String(reply[1] ?? ''), ids, outcomes };
  }

  private claimKeys() {
    const k = this.keys;
    return {
      meta: k.meta,
      wait: k.wait,
      prio: k.prio,
      prioCounter: k.prioCounter,
      delayed: k.delayed,
      active: k.active,
      events: k.events,
      marker: k.marker,
      limiter: k.limiter,
    };
  }

  private claimArgs(request: ClaimRequest, now: number | undefined) {
    return {
      now: timeArg(now),
      base: this.keys.base,
      count: request.count,
      lockMs: request.lockMs,
      tokenPrefix: request.tokenPrefix,
      exact: request.exact ? 1 : 0,
    };
  }

  async claim(request: ClaimRequest, now?: number): Promise<ClaimResult> {
    const reply = (await runScript(this.client, SCRIPTS.claim, this.claimKeys(), this.claimArgs(request, now))) as Reply;
    return parseClaim(reply, 1, Number(reply[0]), request);
  }

  async complete(batch: Completion[], next: ClaimRequest, now?: number): Promise<AckResult> {
    const rest: (string | number)[] = [];
    for (const c of batch) rest.push(c.id, c.token, c.attempt, c.returnvalue, retentionSpec(c.keep));
    const reply = (await runScript(
      this.client,
      SCRIPTS.complete,
      { ...this.claimKeys(), completed: this.keys.completed },
      this.claimArgs(next, now),
      rest,
    )) as Reply;
    return this.parseAck(reply, batch.length, next);
  }

  async fail(batch: Failure[], next: ClaimRequest, now?: number): Promise<AckResult> {
    const rest: (string | number)[] = [];
    for (const f of batch) {
      const stack = f.stack === '' || f.stackTraceLimit <= 0 ? '' : `${f.stackTraceLimit}|${f.stack}`;
      rest.push(f.id, f.token, f.attempt, f.reason, stack, f.retryDelay, retentionSpec(f.keep));
    }
    const reply = (await runScript(
      this.client,
      SCRIPTS.fail,
      { ...this.claimKeys(), failed: this.keys.failed },
      this.claimArgs(next, now),
      rest,
    )) as Reply;
    return this.parseAck(reply, batch.length, next);
  }

  private parseAck(reply: Reply, n: number, next: ClaimRequest): AckResult {
    const now = Number(reply[0]);
    const codes = reply.slice(1, 1 + n).map(Number) as WriteCode[];
    return { now, codes, next: parseClaim(reply, 1 + n, now, next) };
  }

  async extendLocks(
    locks: { id: string; token: string }[],
    lockMs: number,
    worker: { id: string; info: string; ttlMs: number } | undefined,
    now?: number,
  ): Promise<{ now: number; epoch: string; lost: string[] }> {
    const rest: string[] = [];
    for (const lock of locks) rest.push(lock.id, lock.token);
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.extendLocks,
      { meta: k.meta, active: k.active, workers: k.workers, workerInfo: k.workerInfo },
      { now: timeArg(now), base: k.base, lockMs, workerId: worker?.id ?? '', workerInfo: worker?.info ?? '', ttlMs: worker?.ttlMs ?? 0 },
      rest,
    )) as Reply;
    return { now: Number(reply[0]), epoch: String(reply[1] ?? ''), lost: reply.slice(2).map(String) };
  }

  async unregisterWorker(workerId: string): Promise<void> {
    await runScript(this.client, SCRIPTS.unregisterWorker, { workers: this.keys.workers, workerInfo: this.keys.workerInfo }, { workerId });
  }

  async rescueStalled(options: RescueOptions, now?: number): Promise<RescueResult> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.rescueStalled,
      {
        meta: k.meta,
        wait: k.wait,
        prio: k.prio,
        prioCounter: k.prioCounter,
        active: k.active,
        failed: k.failed,
        events: k.events,
        marker: k.marker,
        stalledCheck: k.stalledCheck,
      },
      {
        now: timeArg(now),
        base: k.base,
        maxStalledCount: options.maxStalledCount,
        limit: options.limit,
        intervalMs: Math.max(1, Math.floor(options.intervalMs)),
        force: options.force ? 1 : 0,
        failKeep: retentionSpec(options.failKeep),
        eventsMaxAgeMs: options.eventsMaxAgeMs,
      },
    )) as Reply;
    const rescuedCount = Number(reply[2]);
    const failedCount = Number(reply[3]);
    return {
      now: Number(reply[0]),
      ran: reply[1] === 1,
      rescued: reply.slice(4, 4 + rescuedCount).map(String),
      failed: reply.slice(4 + rescuedCount, 4 + rescuedCount + failedCount).map(String),
    };
  }

  async releaseOrphans(workerId: string, known: string[]): Promise<number> {
    const k = this.keys;
    let cursor = 0;
    let released = 0;
    while (cursor >= 0) {
      const reply = (await runScript(
        this.client,
        SCRIPTS.releaseOrphans,
        { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, active: k.active, events: k.events, marker: k.marker },
        { base: k.base, workerId, cursor, limit: 1000 },
        known,
      )) as Reply;
      cursor = Number(reply[0]);
      released += Number(reply[1]);
    }
    return released;
  }

  async pause(): Promise<boolean> {
    return (await runScript(this.client, SCRIPTS.pause, { meta: this.keys.meta, events: this.keys.events }, {})) === 1;
  }

  async resume(): Promise<boolean> {
    const k = this.keys;
    return (await runScript(this.client, SCRIPTS.resume, { meta: k.meta, events: k.events, marker: k.marker }, {})) === 1;
  }

  async removeJob(id: string): Promise<number> {
    const k = this.keys;
    return (await runScript(
      this.client,
      SCRIPTS.removeJob,
      {
        meta: k.meta,
        wait: k.wait,
        prio: k.prio,
        delayed: k.delayed,
        active: k.active,
        completed: k.completed,
        failed: k.failed,
        events: k.events,
      },
      { base: k.base, id },
    )) as number;
  }

  async drain(includeDelayed: boolean, limit: number): Promise<number> {
    const k = this.keys;
    return (await runScript(
      this.client,
      SCRIPTS.drain,
      { meta: k.meta, wait: k.wait, prio: k.prio, delayed: k.delayed, events: k.events },
      { base: k.base, delayed: includeDelayed ? 1 : 0, limit },
    )) as number;
  }

  async clean(
    state: CleanableState,
    graceMs: number,
    limit: number,
    cursor: number,
    now?: number,
  ): Promise<{ ids: string[]; cursor: number }> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.clean,
      { meta: k.meta, wait: k.wait, prio: k.prio, delayed: k.delayed, completed: k.completed, failed: k.failed, events: k.events },
      { now: timeArg(now), base: k.base, state, graceMs, limit, cursor },
    )) as Reply;
    return { cursor: Number(reply[0]), ids: reply.slice(1).map(String) };
  }

  async obliterate(force: boolean, count: number, cursor: string): Promise<{ cursor: string; deleted: number } | 'active'> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.obliterate,
      { meta: k.meta, active: k.active, events: k.events },
      { base: k.base, force: force ? 1 : 0, count, cursor },
    )) as Reply;
    if (reply[0] === -1) return 'active';
    return { cursor: String(reply[0]), deleted: Number(reply[1]) };
  }

  async retryJobs(
    state: 'failed' | 'completed',
    options: { count: number; timestamp: number; ids?: string[]; resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean },
  ): Promise<number[]> {
    const k = this.keys;
    const reply = await runScript(
      this.client,
      SCRIPTS.retryJobs,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, source: k[state], events: k.events, marker: k.marker },
      {
        base: k.base,
        state,
        count: options.count,
        timestamp: options.timestamp,
        resetAttemptsMade: options.resetAttemptsMade ? 1 : 0,
        resetAttemptsStarted: options.resetAttemptsStarted ? 1 : 0,
      },
      options.ids ?? [],
    );
    return Array.isArray(reply) ? reply.map(Number) : [Number(reply)];
  }

  async promoteJobs(options: { count: number; ids?: string[] }): Promise<number[]> {
    const k = this.keys;
    const reply = await runScript(
      this.client,
      SCRIPTS.promoteJobs,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, delayed: k.delayed, events: k.events, marker: k.marker },
      { base: k.base, count: options.count },
      options.ids ?? [],
    );
    return Array.isArray(reply) ? reply.map(Number) : [Number(reply)];
  }

  async changeDelay(id: string, delay: number, now?: number): Promise<WriteCode> {
    const k = this.keys;
    return (await runScript(
      this.client,
      SCRIPTS.changeDelay,
      { meta: k.meta, delayed: k.delayed, events: k.events, marker: k.marker },
      { now: timeArg(now), base: k.base, id, delay },
    )) as WriteCode;
  }

  async changePriority(id: string, priority: number, lifo: boolean): Promise<WriteCode> {
    const k = this.keys;
    return (await runScript(
      this.client,
      SCRIPTS.changePriority,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, events: k.events, marker: k.marker },
      { base: k.base, id, priority, lifo: lifo ? 1 : 0 },
    )) as WriteCode;
  }

  async moveToDelayed(id: string, fence: Fence, timestamp: number, now?: number): Promise<WriteCode> {
    const k = this.keys;
    return (await runScript(
      this.client,
      SCRIPTS.moveToDelayed,
      { meta: k.meta, delayed: k.delayed, active: k.active, events: k.events, marker: k.marker },
      { now: timeArg(now), base: k.base, id, token: fence.token, attempt: fence.attempt, timestamp },
    )) as WriteCode;
  }

  async moveToWait(id: string, fence: Fence): Promise<WriteCode> {
    const k = this.keys;
    return (await runScript(
      this.client,
      SCRIPTS.moveToWait,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, active: k.active, events: k.events, marker: k.marker },
      { base: k.base, id, token: fence.token, attempt: fence.attempt },
    )) as WriteCode;
  }

  async rateLimit(ms: number): Promise<void> {
    await runScript(this.client, SCRIPTS.rateLimit, { limiter: this.keys.limiter }, { ms });
  }

  async trimEvents(maxLength: number): Promise<number> {
    return (await runScript(this.client, SCRIPTS.trimEvents, { events: this.keys.events }, { maxLength })) as number;
  }

  async removeDeduplicationKey(id: string): Promise<number> {
    return (await runScript(this.client, SCRIPTS.removeDeduplicationKey, { dedup: this.keys.dedup(id) }, {})) as number;
  }

  async updateProgress(id: string, progress: string, fence: Fence | undefined): Promise<WriteCode> {
    return (await runScript(
      this.client,
      SCRIPTS.updateProgress,
      { meta: this.keys.meta, events: this.keys.events },
      { base: this.keys.base, id, progress, token: fence?.token ?? '', attempt: fence?.attempt ?? '' },
    )) as WriteCode;
  }

  async updateData(id: string, data: string, fence: Fence | undefined): Promise<WriteCode> {
    return (await runScript(
      this.client,
      SCRIPTS.updateData,
      {},
      { base: this.keys.base, id, data, token: fence?.token ?? '', attempt: fence?.attempt ?? '' },
    )) as WriteCode;
  }

  async addLog(id: string, line: string, fence: Fence | undefined, keep: number): Promise<number> {
    return (await runScript(
      this.client,
      SCRIPTS.addLog,
      {},
      { base: this.keys.base, id, line, token: fence?.token ?? '', attempt: fence?.attempt ?? '', keep },
    )) as number;
  }

  async waitForWork(timeoutMs: number): Promise<boolean> {
    this.waitClient ??= this.blockingClient();
    const client = this.waitClient;
    try {
      const reply = await client.call('BLPOP', [this.keys.marker, Math.max(timeoutMs, 1) / 1000]);
      return reply !== null;
    } catch (err) {
      // An interrupted wait (close, disconnect) is not an error: the caller re-checks its state.
      if (this.waitClient !== client) return false;
      throw err;
    }
  }

  interruptWait(): void {
    const client = this.waitClient;
    this.waitClient = undefined;
    client?.disconnect();
  }

  async readEvents(from: string, blockMs: number, count: number, checkGap: boolean): Promise<EventsRead> {
    this.eventsClient ??= this.blockingClient();
    const gap = checkGap && (await this.missedAfter(from));
    const args: (string | number)[] = ['COUNT', count];
    if (blockMs >= 0) args.push('BLOCK', blockMs);
    args.push('STREAMS', this.keys.events, from);
    const reply = (await this.eventsClient.call('XREAD', args)) as [string, [string, string[]][]][] | null;
    const events = [];
    for (const [id, raw] of reply?.[0]?.[1] ?? []) {
      const fields: Record<string, string> = {};
      for (let i = 0; i < raw.length; i += 2) fields[raw[i]] = raw[i + 1];
      events.push({ id, event: fields.event ?? '', fields });
    }
    return { events, gap };
  }

  async lastEventId(): Promise<string> {
    const reply = (await this.client.call('XREVRANGE', [this.keys.events, '+', '-', 'COUNT', 1])) as [string, string[]][];
    return reply[0]?.[0] ?? '0-0';
  }

  /**
   * True when entries after `from` may have been trimmed unread: `from` is older than the
   * stream's first entry (or, reading from the start, entries were trimmed at all). Trimming does
   * not record what it deleted, so this errs on the side of reporting a gap.
   */
  private async missedAfter(from: string): Promise<boolean> {
    let info: unknown[];
    try {
      info = (await this.client.call('XINFO', ['STREAM', this.keys.events])) as unknown[];
    } catch {
      return false; // no stream yet: nothing was trimmed
    }
    const field = (name: string): unknown => info[info.indexOf(name) + 1];
    const length = Number(field('length'));
    const added = Number(field('entries-added'));
    if (length >= added) return false;
    const first = field('first-entry') as [string, string[]] | null;
    if (!first) return true;
    return compareStreamIds(from === '0' ? '0-0' : from, first[0]) < 0;
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const [record] = await this.getJobs([id]);
    return record;
  }

  async getState(id: string): Promise<JobStateOrUnknown> {
    const state = await this.client.hget(this.keys.job(id), 's');
    return state !== null && isJobState(state) ? state : 'unknown';
  }

  async getStateCounts(): Promise<StateCounts> {
    const k = this.keys;
    const replies = (await this.client
      .pipeline()
      .llen(k.wait)
      .zcard(k.prio)
      .zcard(k.delayed)
      .zcard(k.active)
      .zcard(k.completed)
      .zcard(k.failed)
      .exec()) as [unknown, number][];
    const [waiting, prioritized, delayed, active, completed, failed] = replies.map(([, n]) => Number(n));
    return { waiting, prioritized, delayed, active, completed, failed, 'waiting-children': 0 };
  }

  async isPaused(): Promise<boolean> {
    return (await this.client.hexists(this.keys.meta, 'paused')) === 1;
  }

  async getLogs(id: string, start: number, end: number, asc: boolean): Promise<{ logs: string[]; count: number }> {
    const key = this.keys.logs(id);
    if (asc) {
      const [[, logs], [, count]] = (await this.client.pipeline().lrange(key, start, end).llen(key).exec()) as [
        [unknown, string[]],
        [unknown, number],
      ];
      return { logs, count };
    }
    // Newest first: the same ranks counted from the tail.
    const count = await this.client.llen(key);
    return { logs: await this.tailRange(key, count, start, end), count };
  }

  /** Ranks start..end counted from the tail of a list of `length`, newest first. */
  private async tailRange(key: string, length: number, start: number, end: number): Promise<string[]> {
    const last = end < 0 ? length + end : Math.min(end, length - 1);
    if (last < start) return [];
    const items = await this.client.lrange(key, length - 1 - last, length - 1 - start);
    return items.reverse();
  }

  async getRange(state: JobState, start: number, end: number, asc: boolean): Promise<string[]> {
    const k = this.keys;
    if (state === 'waiting-children') return [];
    if (state === 'waiting') {
      if (asc) return this.client.lrange(k.wait, start, end);
      return this.tailRange(k.wait, await this.client.llen(k.wait), start, end);
    }
    const key = { prioritized: k.prio, delayed: k.delayed, active: k.active, completed: k.completed, failed: k.failed }[state];
    return asc ? this.client.zrange(key, start, end) : this.client.zrange(key, start, end, 'REV');
  }

  async getJobs(ids: string[]): Promise<(JobRecord | undefined)[]> {
    if (ids.length === 0) return [];
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.job(id)).get(this.keys.data(id));
    const replies = ((await pipeline.exec()) ?? []) as [unknown, unknown][];
    return ids.map((id, i) => toRecord(id, replies[2 * i][1] as Record<string, string> | null, replies[2 * i + 1][1] as string | null));
  }

  async getDeduplicationJobId(id: string): Promise<string | undefined> {
    return (await this.client.get(this.keys.dedup(id))) ?? undefined;
  }

  async getWorkers(): Promise<{ id: string; info: string }[]> {
    const [seconds, micros] = (await this.client.call('TIME')) as [string, string];
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const ids = await this.client.zrangebyscore(this.keys.workers, now, '+inf');
    if (ids.length === 0) return [];
    const infos = await this.client.hmget(this.keys.workerInfo, ...ids);
    return ids.map((id, i) => ({ id, info: infos[i] ?? '{}' }));
  }

  async getMeta(): Promise<Record<string, string>> {
    return this.client.hgetall(this.keys.meta);
  }

  checkInvariants(): Promise<string[]> {
    return checkQueueInvariants(this.client, this.keys);
  }
}
