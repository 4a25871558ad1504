/**
 * Groups in the Redis backend: changing a group or the queue's limits (configureGroup.lua,
 * configureQueue.lua), reading groups, and counting and listing grouped ready jobs with the
 * others (a grouped job waits in its group's queue, not in `wait`/`prio`: includes/groups.lua).
 */
import type { GroupRecord, GroupSettingsChange, GroupStatus, QueueSettingsChange, StateCounts } from '../backend.js';
import type { JobState } from '../../job/states.js';
import { RedisQueueFlows } from './redis-flows.js';
import { groupSettingPairs, queueSettingPairs } from './redis-settings.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** Scores below this are jobs without a priority (see PRIO_SHIFT in includes/base.lua). */
const PRIO_SHIFT = 4294967296;

const STATUS: Record<string, GroupStatus> = { r: 'ready', c: 'maxed', l: 'limited', p: 'paused' };

function numberOrUndefined(value: string | null): number | undefined {
  return value === null ? undefined : Number(value);
}

export abstract class RedisQueueGroups extends RedisQueueFlows {
  async configureGroup(group: string, op: 'set' | 'pause' | 'resume', settings: GroupSettingsChange = {}): Promise<boolean> {
    const k = this.keys;
    // 1 changed (always for 'set'), 0 a pause or resume of a group already so.
    const code = await runScript(
      this.client,
      SCRIPTS.configureGroup,
      { meta: k.meta, marker: k.marker },
      { base: k.base, group, op },
      groupSettingPairs(settings),
    );
    return Number(code) === 1;
  }

  async configureQueue(change: QueueSettingsChange): Promise<void> {
    const k = this.keys;
    await runScript(this.client, SCRIPTS.configureQueue, { meta: k.meta, marker: k.marker }, {}, queueSettingPairs(change));
  }

  async getRateLimitTtl(maxJobs?: number): Promise<number> {
    const k = this.keys;
    const [manual, meta, time, started, windowTtl] = await Promise.all([
      this.client.pttl(k.limiter),
      this.client.hmget(k.meta, 'lmax', 'ldur'),
      this.client.time(),
      maxJobs === undefined ? Promise.resolve(0) : this.client.zcard(k.rateWindow),
      maxJobs === undefined ? Promise.resolve(0) : this.client.pttl(k.rateWindow),
    ]);
    if (maxJobs !== undefined) {
      // BullMQ's reading: the manual limit, else the window's time left once it holds maxJobs starts.
      if (manual > 0) return manual;
      return started >= maxJobs ? Math.max(windowTtl, 0) : 0;
    }
    if (meta[0] === null || meta[1] === null) return manual; // -2 (Redis's "no key") when not limited
    let ttl = Math.max(manual, 0);
    const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    const [max, duration] = [Number(meta[0]), Number(meta[1])];
    const recent = await this.client.zrangebyscore(k.rateWindow, `(${now - duration}`, '+inf', 'WITHSCORES');
    if (recent.length / 2 >= max) ttl = Math.max(ttl, Number(recent[1]) + duration - now);
    return ttl;
  }

  async getGroupsCount(): Promise<number> {
    return (await this.readGroups(await this.client.zrange(this.keys.groups, 0, -1))).length;
  }

  async getGroups(start: number, end: number): Promise<GroupRecord[]> {
    return this.readGroups(await this.client.zrange(this.keys.groups, start, end));
  }

  async getGroup(id: string): Promise<GroupRecord | undefined> {
    const [record] = await this.readGroups([id]);
    return record;
  }

  async getGroupJobIds(id: string, start: number, end: number): Promise<string[]> {
    return this.client.zrange(this.keys.groupQueue(id), start, end);
  }

  /**
   * Reads groups, leaving out the ones that hold nothing (no job, no setting, not paused): those
   * are forgotten, at once or by the next claim (includes/groups.lua, sweepIdleGroups).
   */
  private async readGroups(ids: string[]): Promise<GroupRecord[]> {
    if (ids.length === 0) return [];
    const k = this.keys;
    const pipeline = this.client.pipeline();
    for (const id of ids) {
      pipeline.hmget(k.group(id), 'st', 'c', 'lm', 'ld', 'ms', 'w', 'lwt');
      pipeline.zcount(k.groupQueue(id), '-inf', `(${PRIO_SHIFT}`);
      pipeline.zcount(k.groupQueue(id), PRIO_SHIFT, '+inf');
    }
    const replies = (await pipeline.exec()) as [Error | null, unknown][];
    const running = await this.activeByGroup();
    const records = ids.map((id, i): GroupRecord => {
      const [st, c, lm, ld, ms, w, lwt] = replies[i * 3][1] as (string | null)[];
      const max = numberOrUndefined(lm);
      const limiter = max === undefined ? undefined : { max, duration: Number(ld) };
      return {
        id,
        status: (st !== null && STATUS[st]) || 'idle',
        waiting: Number(replies[i * 3 + 1][1]),
        prioritized: Number(replies[i * 3 + 2][1]),
        active: running.get(id) ?? 0,
        concurrency: numberOrUndefined(c),
        limiter: limiter && lwt === '1' ? { ...limiter, weight: 'cost' as const } : limiter,
        maxSize: numberOrUndefined(ms),
        weight: numberOrUndefined(w),
      };
    });
    return records.filter(
      (r) =>
        r.status !== 'idle' ||
        r.active > 0 ||
        r.waiting + r.prioritized > 0 ||
        r.concurrency !== undefined ||
        r.limiter !== undefined ||
        r.maxSize !== undefined ||
        r.weight !== undefined,
    );
  }

  /**
   * Active jobs per group, from the active set (a group counts its own only under a concurrency
   * limit). O(active jobs): for reads, not hot paths.
   */
  private async activeByGroup(): Promise<Map<string, number>> {
    const ids = await this.client.zrange(this.keys.active, 0, -1);
    const counts = new Map<string, number>();
    if (ids.length === 0) return counts;
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hget(this.keys.job(id), 'g');
    for (const [, group] of (await pipeline.exec()) as [Error | null, string | null][]) {
      if (group !== null) counts.set(group, (counts.get(group) ?? 0) + 1);
    }
    return counts;
  }

  /** Whether the queue has used groups (its ready jobs may be in group queues). */
  private async groupsInUse(): Promise<boolean> {
    return (await this.client.hexists(this.keys.meta, 'gm')) === 1;
  }

  /** Counts grouped ready jobs into waiting and prioritized. */
  override async getStateCounts(): Promise<StateCounts> {
    const counts = await super.getStateCounts();
    if (!(await this.groupsInUse())) return counts;
    const ids = await this.client.zrange(this.keys.groups, 0, -1);
    for (const group of await this.readGroups(ids)) {
      counts.waiting += group.waiting;
      counts.prioritized += group.prioritized;
    }
    return counts;
  }

  /**
   * Waiting and prioritized jobs: those without a group first, then each group's (groups by id,
   * each in the order it will run); newest first reverses that order. Reads only the page asked.
   */
  override async getRange(state: JobState, start: number, end: number, asc: boolean): Promise<string[]> {
    if ((state !== 'waiting' && state !== 'prioritized') || !(await this.groupsInUse())) return super.getRange(state, start, end, asc);
    const k = this.keys;
    const [min, max] = state === 'waiting' ? ['-inf', `(${PRIO_SHIFT}`] : [String(PRIO_SHIFT), '+inf'];
    const groups = await this.client.zrange(k.groups, 0, -1);
    const pipeline = this.client.pipeline();
    if (state === 'waiting') pipeline.llen(k.wait);
    else pipeline.zcard(k.prio);
    for (const id of groups) pipeline.zcount(k.groupQueue(id), min, max);
    const sizes = ((await pipeline.exec()) as [Error | null, unknown][]).map(([, n]) => Number(n));
    const total = sizes.reduce((a, b) => a + b, 0);
    let first = start < 0 ? total + start : start;
    let last = end < 0 ? total + end : Math.min(end, total - 1);
    if (!asc) [first, last] = [total - 1 - last, total - 1 - first];
    const ids: string[] = [];
    let offset = 0;
    for (let segment = 0; segment < sizes.length && offset <= last; segment++) {
      const size = sizes[segment];
      const from = Math.max(first - offset, 0);
      const to = Math.min(last - offset, size - 1);
      if (from <= to) {
        if (segment === 0) ids.push(...(await super.getRange(state, from, to, true)));
        else ids.push(...(await this.client.zrangebyscore(k.groupQueue(groups[segment - 1]), min, max, 'LIMIT', from, to - from + 1)));
      }
      offset += size;
    }
    return asc ? ids : ids.reverse();
  }
}
