/**
 * The Redis implementation of the backend seam: each write is one Lua script call (see
 * scripts/). Reads are in redis-reads.ts, connections in redis-connection.ts; stall rescue and
 * releases in redis-release.ts; a job's own records (progress, data, logs, steps, runs) in
 * redis-job-writes.ts.
 */
import type {
  AckResult,
  AddOutcome,
  AddRequest,
  AddCharge,
  AddResult,
  ClaimRequest,
  ClaimResult,
  Completion,
  Failure,
  Fence,
  NewJob,
  Retention,
  QueueBackend,
  RemoveJobResult,
  CancelJobResult,
  ReplayDeadLetterResult,
  WakeClaim,
  WriteCode,
} from '../backend.js';
import { isClusterClient } from './connection.js';
import { sameSlot } from './keys.js';
import { asRedisFullError, BudgetExceededError, CostAboveRateLimitError, GroupMaxSizeExceededError } from '../../job/errors.js';
import { RedisQueueJobWrites } from './redis-job-writes.js';
import { importDedupKeys, importJobs, reserveJobIds, settleChildren } from './redis-import.js';
import { exportFinish, exportGiveBack, exportRead, exportTake, exportTakePending } from './redis-export.js';
import type {
  ExportedJob,
  ExportSource,
  ExportTake,
  ExternalChildOutcome,
  ImportedDedupKey,
  ImportedDedupOutcome,
  ImportedJob,
  ImportOutcome,
} from '../import-records.js';
import type { RedisBackendOptions } from './redis-connection.js';
import {
  parseClaim,
  retentionSpec,
  timeArg,
  toCancelJobResult,
  toRemoveJobResult,
  toReplayResult,
  toWriteCode,
  type Reply,
  type RawReply,
  num,
} from './replies.js';
import { runScript, runScriptRaw, type KeysOf } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** Version of the key layout, recorded in each queue's meta hash. */
export const LAYOUT_VERSION = '2';

export type { RedisBackendOptions } from './redis-connection.js';

export class RedisQueueBackend extends RedisQueueJobWrites implements QueueBackend {
  private readonly options: RedisBackendOptions;

  constructor(options: RedisBackendOptions) {
    super(options);
    this.options = options;
  }

  sibling(name: string): QueueBackend {
    return new RedisQueueBackend({ ...this.options, connection: this.client, queueName: name, role: 'command' });
  }

  async initQueue(settings: {
    maxEvents: number;
    epoch: string;
    childFailure?: 'fail' | 'wait';
  }): Promise<{ epoch: string; created: boolean }> {
    const [epoch, created] = (await runScript(
      this.client,
      SCRIPTS.initQueue,
      { meta: this.keys.meta },
      { maxEvents: settings.maxEvents, layoutVersion: LAYOUT_VERSION, epoch: settings.epoch, childFailure: settings.childFailure ?? '' },
    )) as [string, number];
    return { epoch, created: created === 1 };
  }

  importJobs(jobs: ImportedJob[], now?: number): Promise<ImportOutcome[]> {
    return importJobs(this.client, this.options.prefix, this.keys, jobs, now);
  }

  reserveJobIds(atLeast: number): Promise<number> {
    return reserveJobIds(this.client, this.keys, atLeast);
  }

  importDedupKeys(keys: ImportedDedupKey[]): Promise<ImportedDedupOutcome> {
    return importDedupKeys(this.client, this.keys, keys);
  }

  settleChildren(id: string, children: ExternalChildOutcome[], now?: number): Promise<number> {
    return settleChildren(this.client, this.options.prefix, this.keys, id, children, now);
  }

  exportTake(source: ExportSource, offset: number, count: number, now?: number): Promise<ExportTake> {
    return exportTake(this.client, this.keys, source, offset, count, now);
  }

  exportTakePending(schedulerId: string, id: string): Promise<boolean> {
    return exportTakePending(this.client, this.keys, schedulerId, id);
  }

  async exportPending(): Promise<string[]> {
    return await this.client.zrange(this.keys.exportMoving, 0, -1);
  }

  exportRead(ids: string[], maxLogs: number, inPlace?: boolean): Promise<(ExportedJob | undefined)[]> {
    return exportRead(this.client, this.keys, ids, maxLogs, inPlace);
  }

  exportFinish(ids: string[], now?: number): Promise<number> {
    return exportFinish(this.client, this.keys, ids, now);
  }

  exportGiveBack(ids: string[]): Promise<number> {
    return exportGiveBack(this.client, this.keys, ids);
  }

  async addJobs(jobs: NewJob[], request: AddRequest | undefined, now?: number, charge?: AddCharge): Promise<AddResult> {
    const k = this.keys;
    const rest: (string | number)[] = [];
    // Costs and budget travel only when a job has a cost: a plain add pays two empty arguments.
    const costs = jobs.some((job) => job.cost !== undefined) ? JSON.stringify(jobs.map((job) => job.cost ?? -1)) : '';
    const budget =
      costs !== '' && charge?.budget ? JSON.stringify({ l: charge.budget.limit, w: charge.budget.window, t: charge.budget.tenants }) : '';
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
        d ? (d.replace ? 'r' : '') + (d.keepLast ? 'k' : '') : '',
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
      {
        now: timeArg(now),
        base: k.base,
        seq: request ? request.seq : '',
        keep: request ? request.keep : 0,
        costs,
        budget,
        allOrNothing: charge?.allOrNothing ? 1 : 0,
      },
      rest,
    ).catch((err: unknown) => {
      // A full Redis (noeviction) refuses the add before writing anything: a typed refusal.
      throw asRedisFullError(err, `the add of ${jobs.length === 1 ? 'a job' : `${jobs.length} jobs`} to queue "${this.queueName}"`);
    })) as Reply;
    if (reply[2] === -1) throw GroupMaxSizeExceededError.of(this.queueName, String(reply[3]), Number(reply[4]), Number(reply[5]));
    if (reply[2] === -2) throw this.addRefusal(jobs, charge, Number(reply[4]) - 1, Number(reply[3]), String(reply[5]));
    const ids: string[] = [];
    const outcomes: AddOutcome[] = [];
    let refused: (Error | undefined)[] | undefined;
    for (let i = 2; i < reply.length; i += 2) {
      const flag = reply[i + 1];
      if (flag === 3 || flag === 4 || flag === 5) {
        refused ??= new Array<Error | undefined>(jobs.length);
        refused[ids.length] = this.addRefusal(jobs, charge, ids.length, flag, String(reply[i]));
        ids.push('');
        outcomes.push('refused');
        continue;
      }
      ids.push(String(reply[i]));
      outcomes.push(flag === 1 ? 'duplicated' : flag === 2 ? 'deduplicated' : 'added');
    }
    return { now: Number(reply[0]), epoch: String(reply[1] ?? ''), ids, outcomes, ...(refused ? { refused } : {}) };
  }

  /**
   * The typed error of job `index` refused by addJobs: 3 its tenant's budget (detail: the use), 4
   * the queue's weighted limit, 5 its group's ('max:durationMs').
   */
  private addRefusal(jobs: NewJob[], charge: AddCharge | undefined, index: number, code: number, detail: string): Error {
    const cost = jobs[index].cost ?? 0;
    if (code === 3 && charge?.budget) {
      const { limit, window, tenants } = charge.budget;
      return BudgetExceededError.of(this.queueName, tenants[index], Number(detail), cost, limit, window);
    }
    const [max, duration] = detail.split(':').map(Number);
    if (code === 5) {
      const group = (JSON.parse(jobs[index].opts || '{}') as { group?: { id?: string } }).group?.id ?? '';
      return CostAboveRateLimitError.of(this.queueName, cost, max, duration, group);
    }
    return CostAboveRateLimitError.of(this.queueName, cost, max, duration);
  }

  /** The keys of claim, complete and fail, built once per backend (they are the same at every call). */
  private hotKeys:
    | {
        claim: KeysOf<typeof SCRIPTS.claim>;
        complete: KeysOf<typeof SCRIPTS.complete>;
        fail: KeysOf<typeof SCRIPTS.fail>;
      }
    | undefined;

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

  private scriptKeys() {
    return (this.hotKeys ??= {
      claim: this.claimKeys(),
      complete: { ...this.claimKeys(), completed: this.keys.completed, failed: this.keys.failed },
      fail: { ...this.claimKeys(), failed: this.keys.failed },
    });
  }

  private claimArgs(request: ClaimRequest, now: number | undefined) {
    return {
      now: timeArg(now),
      base: this.keys.base,
      count: request.count,
      lockMs: request.lockMs,
      tokenPrefix: request.tokenPrefix,
      exact: request.exact ? 1 : 0,
      limit: request.limiter ? `${request.limiter.max}:${request.limiter.duration}${request.limiter.weighted ? ':w' : ''}` : '',
      by: request.by ?? '',
    };
  }

  /** The claim script's arguments: the shared ones, and which worker's wait claim it is (voidable), if one. */
  private claimOnlyArgs(request: ClaimRequest, now: number | undefined) {
    const voidable = request.voidable;
    return { ...this.claimArgs(request, now), waitWorker: voidable?.workerId ?? '', waitSeq: voidable?.seq ?? '' };
  }

  async claim(request: ClaimRequest, now?: number): Promise<ClaimResult> {
    const reply = (await runScriptRaw(this.client, SCRIPTS.claim, this.scriptKeys().claim, this.claimOnlyArgs(request, now))) as RawReply;
    return parseClaim(reply, 1, num(reply[0], 0), request);
  }

  /**
   * BLPOP on the marker with the claim sent right behind it on the wait connection: Redis runs a
   * blocked client's next command as soon as its BLPOP returns, so the claim runs in the same
   * event-loop turn as the wake-up, and a job added to an idle queue starts one round trip sooner.
   * On a Redis Cluster client it waits, then claims on the command connection (a cluster client
   * routes each command on its own).
   *
   * The claim counts as sent once the wait connection is ready (ioredis writes nothing before).
   * When that connection closes afterwards, the claim may have run with its reply lost: on an
   * interruption (close, pause, a reconnect of the command connection), or re-sent by ioredis
   * after the connection came back (two runs, one reply). Either is reported `uncertain` while the
   * command connection is up; while it is down, its own reconnect starts the orphan release (the
   * worker's onReconnect), and a worker closing meanwhile leaves any orphan to stall rescue.
   */
  async waitThenClaim(timeoutMs: number, request: ClaimRequest): Promise<WakeClaim> {
    if (isClusterClient(this.client)) {
      if (!(await this.waitForWork(timeoutMs)) && this.waitClient === undefined) return { claim: undefined, uncertain: false };
      return { claim: await this.claim(request), uncertain: false };
    }
    const { client, blockMs } = this.waitConnection(timeoutMs);
    let sent = client.status === 'ready';
    let lost = false;
    const onReady = (): void => {
      sent = true;
    };
    const onClose = (): void => {
      if (sent) lost = true;
    };
    client.on('ready', onReady);
    client.on('close', onClose);
    // Both written now, in this order (runScriptRaw sends before its first await).
    const wait = client.call('BLPOP', [this.keys.marker, blockMs / 1000]);
    const claim = runScriptRaw(client, SCRIPTS.claim, this.scriptKeys().claim, this.claimOnlyArgs(request, undefined));
    try {
      const [, reply] = (await Promise.all([wait, claim])) as [unknown, RawReply];
      return { claim: parseClaim(reply, 1, num(reply[0], 0), request), uncertain: lost && this.client.status === 'ready' };
    } catch (err) {
      // Interrupted (close, pause, reconnect): not an error; the caller re-checks its state.
      if (this.waitClient !== client) return { claim: undefined, uncertain: sent && this.client.status === 'ready' };
      throw err;
    } finally {
      client.off('ready', onReady);
      client.off('close', onClose);
    }
  }

  async wakeWaiters(): Promise<void> {
    await this.client.call('RPUSH', [this.keys.marker, '1']);
  }

  async complete(batch: Completion[], next: ClaimRequest, now?: number): Promise<AckResult> {
    const rest = new Array<string | number>(batch.length * 5);
    let at = 0;
    for (const c of batch) {
      rest[at++] = c.id;
      rest[at++] = c.token;
      rest[at++] = c.attempt;
      rest[at++] = c.returnvalue;
      rest[at++] = retentionSpec(c.keep);
    }
    const reply = (await runScriptRaw(
      this.client,
      SCRIPTS.complete,
      this.scriptKeys().complete,
      this.claimArgs(next, now),
      rest,
    )) as RawReply;
    return this.parseAck(reply, batch.length, next);
  }

  async fail(batch: Failure[], next: ClaimRequest, now?: number): Promise<AckResult> {
    const rest: (string | number)[] = [];
    for (const f of batch) {
      const stack = f.stack === '' || f.stackTraceLimit <= 0 ? '' : `${f.stackTraceLimit}|${f.stack}`;
      rest.push(f.id, f.token, f.attempt, f.reason, stack, f.retryDelay, retentionSpec(f.keep), f.timedOut ? 't' : '');
    }
    const reply = (await runScriptRaw(
      this.client,
      SCRIPTS.fail,
      this.scriptKeys().fail,
      { ...this.claimArgs(next, now), queueName: this.queueName },
      rest,
    )) as RawReply;
    return this.parseAck(reply, batch.length, next);
  }

  private parseAck(reply: RawReply, n: number, next: ClaimRequest): AckResult {
    const now = num(reply[0], 0);
    const codes = new Array<WriteCode>(n);
    for (let i = 0; i < n; i++) codes[i] = toWriteCode(reply[1 + i], 'complete/fail');
    return { now, codes, next: parseClaim(reply, 1 + n, now, next) };
  }

  async extendLocks(
    locks: ({ id: string } & Fence)[],
    lockMs: number,
    worker: { id: string; info: string; ttlMs: number } | undefined,
    now?: number,
  ): Promise<{ now: number; epoch: string; lost: string[]; cancelled: string[] }> {
    const rest: string[] = [];
    for (const lock of locks) rest.push(lock.id, lock.token, String(lock.attempt));
    const k = this.keys;
    let workerInfo = worker?.info ?? '';
    if (worker) {
      const clientId = await this.commandClientId();
      if (clientId !== '') workerInfo = JSON.stringify({ ...(JSON.parse(workerInfo) as object), clientId });
    }
    const reply = (await runScript(
      this.client,
      SCRIPTS.extendLocks,
      { meta: k.meta, active: k.active, workers: k.workers, workerInfo: k.workerInfo },
      { now: timeArg(now), base: k.base, lockMs, workerId: worker?.id ?? '', workerInfo, ttlMs: worker?.ttlMs ?? 0 },
      rest,
    )) as Reply;
    const lostCount = Number(reply[2]);
    return {
      now: Number(reply[0]),
      epoch: String(reply[1] ?? ''),
      lost: reply.slice(3, 3 + lostCount).map(String),
      cancelled: reply.slice(3 + lostCount).map(String),
    };
  }

  async unregisterWorker(workerId: string): Promise<void> {
    await runScript(this.client, SCRIPTS.unregisterWorker, { workers: this.keys.workers, workerInfo: this.keys.workerInfo }, { workerId });
  }

  async pause(): Promise<boolean> {
    return (await runScript(this.client, SCRIPTS.pause, { meta: this.keys.meta, events: this.keys.events }, {})) === 1;
  }

  async resume(): Promise<boolean> {
    const k = this.keys;
    return (await runScript(this.client, SCRIPTS.resume, { meta: k.meta, events: k.events, marker: k.marker }, {})) === 1;
  }

  async removeJob(id: string, now?: number, withChildren = false): Promise<RemoveJobResult> {
    const k = this.keys;
    const reply = (await runScript(
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
        waitingChildren: k.waitingChildren,
      },
      { now: timeArg(now), base: k.base, id, children: withChildren ? 1 : 0 },
    )) as [number, string | number];
    return toRemoveJobResult(reply);
  }

  async changeDelay(id: string, delay: number, now?: number): Promise<WriteCode> {
    const k = this.keys;
    const code = await runScript(
      this.client,
      SCRIPTS.changeDelay,
      { meta: k.meta, delayed: k.delayed, events: k.events, marker: k.marker },
      { now: timeArg(now), base: k.base, id, delay },
    );
    return toWriteCode(code, 'changeDelay');
  }

  async changePriority(id: string, priority: number, lifo: boolean): Promise<WriteCode> {
    const k = this.keys;
    const code = await runScript(
      this.client,
      SCRIPTS.changePriority,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, events: k.events, marker: k.marker },
      { base: k.base, id, priority, lifo: lifo ? 1 : 0 },
    );
    return toWriteCode(code, 'changePriority');
  }

  async moveToDelayed(id: string, fence: Fence, timestamp: number, now?: number): Promise<WriteCode> {
    const k = this.keys;
    const code = await runScript(
      this.client,
      SCRIPTS.moveToDelayed,
      { meta: k.meta, delayed: k.delayed, active: k.active, events: k.events, marker: k.marker },
      { now: timeArg(now), base: k.base, id, token: fence.token, attempt: fence.attempt, timestamp },
    );
    return toWriteCode(code, 'moveToDelayed');
  }

  async moveToWait(id: string, fence: Fence): Promise<WriteCode> {
    const k = this.keys;
    const code = await runScript(
      this.client,
      SCRIPTS.moveToWait,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, active: k.active, events: k.events, marker: k.marker },
      { base: k.base, id, token: fence.token, attempt: fence.attempt },
    );
    return toWriteCode(code, 'moveToWait');
  }

  async rateLimit(ms: number): Promise<number> {
    const k = this.keys;
    return Number(
      await runScript(
        this.client,
        SCRIPTS.rateLimit,
        { limiter: k.limiter, window: k.rateWindow, weightedWindow: k.weightedWindow, weightedSum: k.weightedSum, marker: k.marker },
        { ms },
      ),
    );
  }

  async trimEvents(maxLength: number): Promise<number> {
    return (await runScript(this.client, SCRIPTS.trimEvents, { events: this.keys.events }, { maxLength })) as number;
  }

  async removeDeduplicationKey(id: string, jobId?: string): Promise<boolean> {
    const deleted = await runScript(
      this.client,
      SCRIPTS.removeDeduplicationKey,
      { dedup: this.keys.dedup(id), kept: this.keys.dedupKept(id) },
      { jobId: jobId ?? '' },
    );
    return Number(deleted) > 0;
  }

  async cancelJob(id: string, reason: string, failKeep: Retention, now?: number): Promise<CancelJobResult> {
    const k = this.keys;
    const code = await runScript(
      this.client,
      SCRIPTS.cancelJob,
      {
        meta: k.meta,
        wait: k.wait,
        prio: k.prio,
        delayed: k.delayed,
        failed: k.failed,
        events: k.events,
        waitingChildren: k.waitingChildren,
      },
      { now: timeArg(now), base: k.base, id, reason, channel: k.cancelChannel, failKeep: retentionSpec(failKeep) },
    );
    return toCancelJobResult(code);
  }

  async replayDeadLetters(ids: string[], now?: number): Promise<ReplayDeadLetterResult[]> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.replayDeadLetters,
      { meta: k.meta, wait: k.wait, completed: k.completed, failed: k.failed, events: k.events },
      { now: timeArg(now), base: k.base, queueName: this.queueName },
      ids,
    )) as number[];
    return reply.map(toReplayResult);
  }

  get isCluster(): boolean {
    return isClusterClient(this.client);
  }

  sharesSlotWith(other: string): boolean {
    return sameSlot(this.keys.base, this.queueName, other);
  }
}
