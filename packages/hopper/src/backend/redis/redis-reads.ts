/**
 * The read side of the Redis backend: jobs, states, counts, logs, events, workers, meta, and the
 * invariant audit. Plain commands and pipelines; no script, but for the metrics write
 * (redis-metrics.ts), which sits beside its read.
 */
import type {
  EventsRead,
  ExactMetricsRecord,
  JobRecord,
  LatencyEntry,
  MetricsBucket,
  MetricsRecord,
  MetricsType,
  QueueSettings,
  SchedulerLastRun,
  SchedulerRecord,
  StateCounts,
  StepRecord,
} from '../backend.js';
import { isJobState, type JobState, type JobStateOrUnknown } from '../../job/states.js';
import { checkQueueInvariants } from './invariants.js';
import { Cluster } from 'ioredis';
import { RedisQueueConnection } from './redis-connection.js';
import { blockTime, type RedisClient } from './connection.js';
import { compareStreamIds, toRecord } from './replies.js';
import { queueSettingsOf } from './redis-settings.js';
import { decodeStep } from '../step-records.js';
import { getExactMetrics, getMetrics, recordLatency, recordMetrics } from './redis-metrics.js';

export abstract class RedisQueueReads extends RedisQueueConnection {
  redisClient(): RedisClient {
    return this.client;
  }

  async getEpoch(): Promise<string> {
    return (await this.client.hget(this.keys.meta, 'epoch')) ?? '';
  }

  async readEvents(from: string, blockMs: number, count: number, checkGap: boolean): Promise<EventsRead> {
    this.eventsClient ??= this.blockingClient(this.keys.eventsReaderName);
    const gap = checkGap && (await this.missedAfter(from));
    const args: (string | number)[] = ['COUNT', count];
    // A block past one Node timer's reach is cut to MAX_BLOCK_MS: the caller reads again.
    if (blockMs >= 0) blockMs = blockTime(blockMs);
    if (blockMs >= 0) args.push('BLOCK', blockMs);
    args.push('STREAMS', this.keys.events, from);
    this.fitBlockingDeadline(this.eventsClient, blockMs >= 0 ? blockMs : undefined);
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
  protected async missedAfter(from: string): Promise<boolean> {
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

  async getCountsPerPriority(priorities: number[]): Promise<number[]> {
    const k = this.keys;
    // A ready job's score packs its priority above a 32-bit FIFO counter (includes/base.lua), in
    // `prio` and in each group's queue alike; priority 0 jobs without a group are the wait list.
    const shift = 4294967296;
    const groups = await this.client.zrange(k.groups, 0, -1);
    const pipeline = this.client.pipeline();
    for (const p of priorities) {
      if (p === 0) pipeline.llen(k.wait);
      else pipeline.zcount(k.prio, p * shift, `(${(p + 1) * shift}`);
      for (const g of groups) pipeline.zcount(`${k.base}gq:${g}`, p === 0 ? '-inf' : p * shift, `(${(p + 1) * shift}`);
    }
    const replies = ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
    const per = groups.length + 1;
    return priorities.map((_, i) =>
      replies.slice(i * per, (i + 1) * per).reduce((sum, [err, n]) => {
        if (err) throw err;
        return sum + Number(n);
      }, 0),
    );
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
      .zcard(k.waitingChildren)
      .exec()) as [unknown, number][];
    const [waiting, prioritized, delayed, active, completed, failed, waitingChildren] = replies.map(([, n]) => Number(n));
    return { waiting, prioritized, delayed, active, completed, failed, 'waiting-children': waitingChildren };
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
  protected async tailRange(key: string, length: number, start: number, end: number): Promise<string[]> {
    const last = end < 0 ? length + end : Math.min(end, length - 1);
    if (last < start) return [];
    const items = await this.client.lrange(key, length - 1 - last, length - 1 - start);
    return items.reverse();
  }

  async getRange(state: JobState, start: number, end: number, asc: boolean): Promise<string[]> {
    const k = this.keys;
    if (state === 'waiting') {
      if (asc) return this.client.lrange(k.wait, start, end);
      return this.tailRange(k.wait, await this.client.llen(k.wait), start, end);
    }
    const key = {
      prioritized: k.prio,
      delayed: k.delayed,
      active: k.active,
      completed: k.completed,
      failed: k.failed,
      'waiting-children': k.waitingChildren,
    }[state];
    return asc ? this.client.zrange(key, start, end) : this.client.zrange(key, start, end, 'REV');
  }

  async getJobs(ids: string[]): Promise<(JobRecord | undefined)[]> {
    if (ids.length === 0) return [];
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.job(id)).get(this.keys.data(id));
    const replies = ((await pipeline.exec()) ?? []) as [unknown, unknown][];
    return ids.map((id, i) => toRecord(id, replies[2 * i][1] as Record<string, string> | null, replies[2 * i + 1][1] as string | null));
  }

  async getSteps(id: string): Promise<Record<string, StepRecord>> {
    const stored = await this.client.hgetall(this.keys.steps(id));
    return Object.fromEntries(Object.entries(stored).map(([key, record]) => [key, decodeStep(record)]));
  }

  async getStep(id: string, key: string): Promise<StepRecord | undefined> {
    const stored = await this.client.hget(this.keys.steps(id), key);
    return stored === null ? undefined : decodeStep(stored);
  }

  async getDeduplicationJobId(id: string): Promise<string | undefined> {
    return (await this.client.get(this.keys.dedup(id))) ?? undefined;
  }

  async openEventsReader(): Promise<void> {
    this.eventsClient ??= this.blockingClient(this.keys.eventsReaderName);
    await this.eventsClient.call('PING');
  }

  async getEventsReaders(): Promise<Record<string, string>[]> {
    const name = this.keys.eventsReaderName;
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    const lists = await Promise.all(nodes.map(async (node) => String(await node.call('CLIENT', ['LIST', 'TYPE', 'normal']))));
    const readers: Record<string, string>[] = [];
    for (const list of lists) {
      for (const line of list.split(/\r?\n/)) {
        if (!line.includes(` name=${name} `)) continue;
        const client: Record<string, string> = {};
        for (const pair of line.split(' ')) {
          const eq = pair.indexOf('=');
          if (eq > 0) client[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        if (client.name === name) readers.push(client);
      }
    }
    return readers;
  }

  async getWorkers(): Promise<{ id: string; info: string }[]> {
    const [seconds, micros] = (await this.client.call('TIME')) as [string, string];
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const ids = await this.client.zrangebyscore(this.keys.workers, now, '+inf');
    if (ids.length === 0) return [];
    const infos = await this.client.hmget(this.keys.workerInfo, ...ids);
    return ids.map((id, i) => ({ id, info: infos[i] ?? '{}' }));
  }

  async getQueueSettings(): Promise<QueueSettings> {
    return queueSettingsOf(await this.client.hgetall(this.keys.meta));
  }

  checkInvariants(): Promise<string[]> {
    return checkQueueInvariants(this.client, this.keys);
  }

  async getScheduler(id: string): Promise<SchedulerRecord | undefined> {
    const k = this.keys;
    const [[, hash], [, score]] = (await this.client.pipeline().hgetall(k.scheduler(id)).zscore(k.schedulers, id).exec()) as [
      [unknown, Record<string, string>],
      [unknown, string | null],
    ];
    if (!hash || hash.spec === undefined) return undefined;
    // A scheduler held by a ready pending run is scored at the hold's end (workers' timers wake
    // then); its next run is that ready one, due when it was planned.
    const held = hash.hold !== undefined && hash.hold !== '' && hash.due !== undefined;
    const shown = held ? hash.due : score;
    const due = shown === null || shown === 'inf' || shown === '+inf' ? undefined : Number(shown);
    return {
      id,
      spec: hash.spec,
      template: hash.tpl,
      paused: hash.paused === '1',
      last: hash.last ?? '',
      nextDue: due,
      pendingId: hash.pid ?? '',
      fired: Number(hash.fired ?? 0),
      skipped: Number(hash.skipped ?? 0),
      missed: Number(hash.missed ?? 0),
      created: Number(hash.created ?? 0),
      limit: Number(hash.limit ?? 0),
      createdAt: Number(hash.createdAt ?? 0),
    };
  }

  async getSchedulerIds(start: number, end: number, asc: boolean): Promise<string[]> {
    return asc ? this.client.zrange(this.keys.schedulers, start, end) : this.client.zrange(this.keys.schedulers, start, end, 'REV');
  }

  async getSchedulersCount(): Promise<number> {
    return this.client.zcard(this.keys.schedulers);
  }

  async nextSchedulerDue(): Promise<number | null> {
    const [, score] = await this.client.zrange(this.keys.schedulers, 0, 0, 'WITHSCORES');
    return score === undefined || score === 'inf' ? null : Number(score);
  }

  async getDueSchedulers(limit: number, now: number): Promise<string[]> {
    return this.client.zrangebyscore(this.keys.schedDue, '-inf', now, 'LIMIT', 0, limit);
  }

  async time(): Promise<number> {
    const [seconds, micros] = (await this.client.call('TIME')) as [string, string];
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  async recordMetrics(type: MetricsType, buckets: MetricsBucket[], maxDataPoints: number): Promise<void> {
    await recordMetrics(this.client, this.keys, type, buckets, maxDataPoints);
  }

  async getMetrics(type: MetricsType, start: number, end: number): Promise<MetricsRecord> {
    return getMetrics(this.client, this.keys, type, start, end);
  }

  async recordLatency(entries: LatencyEntry[], lastRuns: SchedulerLastRun[]): Promise<void> {
    await recordLatency(this.client, this.keys, entries, lastRuns);
  }

  async getExactMetrics(): Promise<ExactMetricsRecord> {
    return getExactMetrics(this.client, this.keys);
  }
}
