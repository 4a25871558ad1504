/**
 * How jobs leave a worker without a result, in the Redis backend: stall rescue (expired locks),
 * orphan release after a reconnect (claims whose reply was lost), and the release of held jobs
 * by a closing worker. Each is bounded per script call and looped from here.
 */
import type { Fence, RescueOptions, RescueResult, Retention, WriteCode } from '../backend.js';
import { RedisQueueManagement } from './redis-management.js';
import { retentionSpec, timeArg, toWriteCode, type Reply } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** Most jobs per releaseJobs call, and per rescueStalled call (each bounds its script's work). */
export const RELEASE_BATCH = 500;
/** How many active jobs one releaseOrphans call scans (a ZSCAN COUNT hint). */
const ORPHAN_SCAN = 500;

export abstract class RedisQueueRelease extends RedisQueueManagement {
  /** The keys every release script touches: a job goes back in line, or fails for good. */
  private releaseKeys() {
    const k = this.keys;
    return {
      meta: k.meta,
      wait: k.wait,
      prio: k.prio,
      prioCounter: k.prioCounter,
      active: k.active,
      failed: k.failed,
      events: k.events,
      marker: k.marker,
    };
  }

  async rescueStalled(options: RescueOptions, now?: number): Promise<RescueResult> {
    const k = this.keys;
    const reply = (await runScript(
      this.client,
      SCRIPTS.rescueStalled,
      { ...this.releaseKeys(), stalledCheck: k.stalledCheck },
      {
        now: timeArg(now),
        base: k.base,
        maxStalledCount: options.maxStalledCount,
        limit: Math.min(options.limit, RELEASE_BATCH),
        intervalMs: Math.max(1, Math.floor(options.intervalMs)),
        force: options.force ? 1 : 0,
        failKeep: retentionSpec(options.failKeep),
        eventsMaxAgeMs: options.eventsMaxAgeMs,
        queueName: this.queueName,
      },
    )) as Reply;
    const rescuedCount = Number(reply[2]);
    const failedCount = Number(reply[3]);
    const end = 4 + rescuedCount + failedCount;
    return {
      now: Number(reply[0]),
      ran: reply[1] === 1,
      rescued: reply.slice(4, 4 + rescuedCount).map(String),
      failed: reply.slice(4 + rescuedCount, end).map(String),
      expired: reply[1] === 1 ? Number(reply[end]) : 0,
    };
  }

  async releaseOrphans(workerId: string, known: string[], failKeep: Retention, now?: number, voidWaitClaimsUpTo?: number): Promise<number> {
    const k = this.keys;
    let cursor = '0';
    let released = 0;
    do {
      const reply = (await runScript(
        this.client,
        SCRIPTS.releaseOrphans,
        this.releaseKeys(),
        {
          now: timeArg(now),
          base: k.base,
          workerId,
          cursor,
          count: ORPHAN_SCAN,
          failKeep: retentionSpec(failKeep),
          // Voided by the first step: a wait claim that runs later finds it, one that ran before is in the walk.
          voidUpTo: cursor === '0' && voidWaitClaimsUpTo !== undefined ? voidWaitClaimsUpTo : '',
        },
        known,
      )) as Reply;
      cursor = String(reply[0]);
      released += Number(reply[1]) + Number(reply[2]);
    } while (cursor !== '0');
    return released;
  }

  async releaseJobs(jobs: ({ id: string; started: boolean } & Fence)[], failKeep: Retention, now?: number): Promise<WriteCode[]> {
    const k = this.keys;
    const codes: WriteCode[] = [];
    for (let from = 0; from < jobs.length; from += RELEASE_BATCH) {
      const rest: string[] = [];
      for (const job of jobs.slice(from, from + RELEASE_BATCH)) rest.push(job.id, job.token, String(job.attempt), job.started ? '1' : '0');
      const reply = (await runScript(
        this.client,
        SCRIPTS.releaseJobs,
        this.releaseKeys(),
        { now: timeArg(now), base: k.base, failKeep: retentionSpec(failKeep) },
        rest,
      )) as Reply;
      for (const code of reply) codes.push(toWriteCode(code, 'releaseJobs'));
    }
    return codes;
  }
}
