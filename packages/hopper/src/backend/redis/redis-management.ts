/**
 * Bounded management operations in the Redis backend (drain, clean, obliterate, retryJobs,
 * promoteJobs: one batch per call, looped from TypeScript) and job scheduler writes.
 */
import type {
  AddRequest,
  AdvanceSchedulerResult,
  BoundedStep,
  CleanableState,
  MovedJobs,
  OccurrencePlan,
  SchedulerPauseResult,
  SchedulerUpsertResult,
  SchedulerWrite,
} from '../backend.js';
import { RedisQueueGroups } from './redis-groups.js';
import { isClusterClient, type RedisClient } from './connection.js';
import { timeArg, toAdvanceSchedulerResult, toMovedJobs, toSchedulerPauseResult, toSchedulerUpsertResult, type Reply } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** Most ids per removeOrphanedJobs script call. */
const ORPHAN_BATCH = 1000;

export abstract class RedisQueueManagement extends RedisQueueGroups {
  async clearLogs(id: string, keep: number): Promise<number> {
    return (await runScript(this.client, SCRIPTS.clearLogs, { logs: this.keys.logs(id) }, { keep })) as number;
  }

  async removeOrphanedJobs(scanCount: number, limit: number, now?: number): Promise<number> {
    const k = this.keys;
    const jobPrefix = `${k.base}j:`;
    const pattern = `${jobPrefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    // A Cluster client scans its masters (the queue's slot lives on one of them).
    const nodes: RedisClient[] = isClusterClient(this.client)
      ? (this.client as unknown as { nodes(role: string): RedisClient[] }).nodes('master')
      : [this.client];
    let removed = 0;
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = (await node.call('SCAN', [cursor, 'MATCH', pattern, 'COUNT', scanCount])) as [string, string[]];
        cursor = next;
        const ids = keys.map((key) => key.slice(jobPrefix.length));
        for (let from = 0; from < ids.length; from += ORPHAN_BATCH) {
          const reply = (await runScript(
            this.client,
            SCRIPTS.removeOrphanedJobs,
            {
              wait: k.wait,
              prio: k.prio,
              delayed: k.delayed,
              active: k.active,
              completed: k.completed,
              failed: k.failed,
              waitingChildren: k.waitingChildren,
            },
            { now: timeArg(now), base: k.base, max: limit > 0 ? limit - removed : 0 },
            ids.slice(from, from + ORPHAN_BATCH),
          )) as Reply;
          removed += reply.length;
          if (limit > 0 && removed >= limit) return removed;
        }
      } while (cursor !== '0');
    }
    return removed;
  }

  async drain(includeDelayed: boolean, limit: number, cursor: string): Promise<BoundedStep & { removed: number }> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.drain,
      { meta: k.meta, wait: k.wait, prio: k.prio, delayed: k.delayed, events: k.events },
      { now: '', base: k.base, delayed: includeDelayed ? 1 : 0, limit, cursor },
    )) as Reply;
    return { removed: Number(reply[0]), visitedGroups: Number(reply[1]), cursor: Number(reply[2]) === 1 ? null : String(reply[3]) };
  }

  async clean(
    state: CleanableState,
    graceMs: number,
    limit: number,
    cursor: string,
    now?: number,
  ): Promise<BoundedStep & { ids: string[] }> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.clean,
      { meta: k.meta, wait: k.wait, prio: k.prio, delayed: k.delayed, completed: k.completed, failed: k.failed, events: k.events },
      { now: timeArg(now), base: k.base, state, graceMs, limit, cursor },
    )) as Reply;
    return {
      cursor: Number(reply[0]) === 1 ? null : String(reply[1]),
      visitedGroups: Number(reply[2]),
      ids: reply.slice(3).map(String),
    };
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
  ): Promise<MovedJobs> {
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
    return toMovedJobs(reply);
  }

  async promoteJobs(options: { count: number; ids?: string[] }): Promise<MovedJobs> {
    const k = this.keys;
    const reply = await runScript(
      this.client,
      SCRIPTS.promoteJobs,
      { meta: k.meta, wait: k.wait, prio: k.prio, prioCounter: k.prioCounter, delayed: k.delayed, events: k.events, marker: k.marker },
      { base: k.base, count: options.count },
      options.ids ?? [],
    );
    return toMovedJobs(reply);
  }

  private schedulerKeys() {
    const k = this.keys;
    return {
      schedulers: k.schedulers,
      schedDue: k.schedDue,
      delayed: k.delayed,
      events: k.events,
      meta: k.meta,
      wait: k.wait,
      prio: k.prio,
    };
  }

  async upsertScheduler(s: SchedulerWrite, now?: number): Promise<SchedulerUpsertResult> {
    const code = await runScript(this.client, SCRIPTS.upsertScheduler, this.schedulerKeys(), {
      now: timeArg(now),
      base: this.keys.base,
      id: s.id,
      hash: s.hash,
      spec: s.spec,
      template: s.template,
      overlap: s.overlap,
      catchup: s.catchup,
      catchupWindow: s.catchupWindow,
      limit: s.limit,
      paused: s.paused ? 1 : 0,
      seedLast: s.seed ? s.seed.last : '',
      seedCreated: s.seed ? s.seed.created : '',
    });
    return toSchedulerUpsertResult(code);
  }

  async advanceScheduler(
    id: string,
    expectedLast: string,
    occurrences: OccurrencePlan[],
    after: number | null,
    missed: number,
    now?: number,
  ): Promise<AdvanceSchedulerResult> {
    const rest: (string | number)[] = [];
    for (const o of occurrences) rest.push(o.instant, o.due, o.pending ? 1 : 0);
    const reply = await runScript(
      this.client,
      SCRIPTS.advanceScheduler,
      { ...this.schedulerKeys(), marker: this.keys.marker, prioCounter: this.keys.prioCounter },
      { now: timeArg(now), base: this.keys.base, id, expectedLast, missed, after: after ?? '' },
      rest,
    );
    return toAdvanceSchedulerResult(reply);
  }

  async removeScheduler(id: string): Promise<boolean> {
    return (await runScript(this.client, SCRIPTS.removeScheduler, this.schedulerKeys(), { base: this.keys.base, id })) === 1;
  }

  async pauseScheduler(id: string, paused: boolean, now?: number): Promise<SchedulerPauseResult> {
    const code = await runScript(this.client, SCRIPTS.pauseScheduler, this.schedulerKeys(), {
      now: timeArg(now),
      base: this.keys.base,
      id,
      paused: paused ? 1 : 0,
    });
    return toSchedulerPauseResult(code);
  }

  async runScheduled(
    id: string,
    trigger: boolean,
    instants: number[],
    request: AddRequest | undefined,
    now?: number,
  ): Promise<string[] | undefined> {
    const k = this.keys;
    const reply = await runScript(
      this.client,
      SCRIPTS.runScheduled,
      {
        schedulers: k.schedulers,
        delayed: k.delayed,
        events: k.events,
        meta: k.meta,
        marker: k.marker,
        wait: k.wait,
        prio: k.prio,
        prioCounter: k.prioCounter,
        requests: k.requests(request?.producerId ?? '-'),
      },
      { now: timeArg(now), base: k.base, id, trigger: trigger ? 1 : 0, seq: request ? request.seq : '', keep: request ? request.keep : 0 },
      instants,
    );
    return Array.isArray(reply) ? reply.map(String) : undefined;
  }
}
