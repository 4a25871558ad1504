/**
 * The invariant audit for groups (see scripts/includes/groups.lua): every grouped ready job is in
 * its group's queue only; a group with a backlog is in exactly one of the ring, the rate-limited
 * set, parked at its concurrency, or paused; a parked group has active jobs to release it; the
 * ring holds '' once while groups are on; and each group's active count equals its jobs actually
 * active (a group left out of the ring, or with a count that drifted, would wait forever).
 */
import type { RedisClient } from './connection.js';
import type { QueueKeys } from './keys.js';

/** Scores from this up are prioritized jobs (PRIO_SHIFT in includes/base.lua). */
const PRIO_SHIFT = 4294967296;

/** Where each grouped ready job sits: job id -> { group, state its score implies }. */
export type GroupMembership = Map<string, { group: string; state: string }[]>;

/** Reads every group queue: which jobs each holds, and in what state by score. */
export async function readGroupQueues(client: RedisClient, keys: QueueKeys, groups: string[]): Promise<GroupMembership> {
  const membership: GroupMembership = new Map();
  if (groups.length === 0) return membership;
  const pipeline = client.pipeline();
  for (const g of groups) pipeline.zrange(keys.groupQueue(g), 0, -1, 'WITHSCORES');
  const replies = ((await pipeline.exec()) ?? []) as [unknown, string[]][];
  groups.forEach((group, n) => {
    const flat = replies[n][1];
    for (let i = 0; i < flat.length; i += 2) {
      const list = membership.get(flat[i]) ?? [];
      list.push({ group, state: Number(flat[i + 1]) >= PRIO_SHIFT ? 'prioritized' : 'waiting' });
      membership.set(flat[i], list);
    }
  });
  return membership;
}

/** Every group the queue's keys mention: listed, queued, in the ring or the limited set. */
export async function knownGroups(client: RedisClient, keys: QueueKeys, queued: string[]): Promise<string[]> {
  const [listed, ring, limited] = await Promise.all([
    client.zrange(keys.groups, 0, -1),
    client.lrange(keys.groupRing, 0, -1),
    client.zrange(keys.groupsLimited, 0, -1),
  ]);
  const ringGroups = ring.filter((member) => member !== '').map((member) => member.slice(1));
  return [...new Set([...listed, ...queued, ...ringGroups, ...limited])];
}

/**
 * Checks the groups. `jobs` are the queue's jobs with a group: id, stored state, group.
 * `membership` is readGroupQueues' result.
 */
export async function checkGroups(
  client: RedisClient,
  keys: QueueKeys,
  groups: string[],
  membership: GroupMembership,
  jobs: { id: string; state: string; group: string; counted: boolean }[],
): Promise<string[]> {
  const problems: string[] = [];
  const [ring, limited, parked, groupsOn] = await Promise.all([
    client.lrange(keys.groupRing, 0, -1),
    client.zrange(keys.groupsLimited, 0, -1),
    client.smembers(keys.groupsParked),
    client.hexists(keys.meta, 'gm'),
  ]);
  const defaultConcurrency = await client.hget(keys.meta, 'gcon');
  const parkedSet = new Set(parked);
  // Ring members: '' (jobs without a group), 'p' + id (no settings of its own), 's' + id.
  const inRing = new Map<string, number>();
  const plainInRing = new Set<string>();
  for (const member of ring) {
    const g = member === '' ? '' : member.slice(1);
    inRing.set(g, (inRing.get(g) ?? 0) + 1);
    if (member.startsWith('p')) plainInRing.add(g);
  }
  if (groupsOn === 1 && inRing.get('') !== 1)
    problems.push(`groups are on but the ring holds '' ${inRing.get('') ?? 0} times (expected once)`);
  if (groupsOn === 0 && ring.length > 0) problems.push(`the ring holds ${ring.length} entries but groups are off`);
  const limitedSet = new Set(limited);

  // Active jobs per group: counted ones (claimed under a concurrency limit) and all.
  const activeOf = new Map<string, number>();
  const runningOf = new Map<string, number>();
  for (const job of jobs) {
    if (job.state === 'active') runningOf.set(job.group, (runningOf.get(job.group) ?? 0) + 1);
    if (job.state === 'active' && job.counted) activeOf.set(job.group, (activeOf.get(job.group) ?? 0) + 1);
    if (job.state === 'waiting' || job.state === 'prioritized') {
      const places = membership.get(job.id) ?? [];
      if (places.length !== 1 || places[0].group !== job.group) {
        problems.push(
          `job ${job.id} (${job.state}) of group ${job.group} is in ${places.length} group queues (${places.map((p) => p.group).join(', ')})`,
        );
      }
    }
  }

  const pipeline = client.pipeline();
  for (const g of groups) {
    pipeline.hmget(keys.group(g), 'st', 'a', 'c', 'lm', 'ms', 'w');
    pipeline.zcard(keys.groupQueue(g));
  }
  const replies = ((await pipeline.exec()) ?? []) as [unknown, unknown][];
  groups.forEach((g, n) => {
    const [st, a, c, lm, ms, w] = replies[2 * n][1] as (string | null)[];
    const hasSettings = c !== null || lm !== null || ms !== null || w !== null;
    if (plainInRing.has(g) && hasSettings) problems.push(`group ${g} has settings of its own but is in the ring as a plain group`);
    const backlog = Number(replies[2 * n + 1][1]);
    const ringCount = inRing.get(g) ?? 0;
    const active = Number(a ?? 0);
    const actual = activeOf.get(g) ?? 0;
    if (active !== actual) problems.push(`group ${g} counts ${active} active jobs but ${actual} counted jobs are active`);
    if ((c !== null || defaultConcurrency !== null) && actual !== (runningOf.get(g) ?? 0)) {
      problems.push(`group ${g} has a concurrency limit but ${(runningOf.get(g) ?? 0) - actual} of its active jobs are not counted`);
    }
    if (ringCount > 1) problems.push(`group ${g} is in the ring ${ringCount} times`);
    if (ringCount > 0 && st !== 'r') problems.push(`group ${g} is in the ring but its status is ${st ?? 'idle'}`);
    if (st === 'r' && backlog > 0 && ringCount !== 1) problems.push(`group ${g} is ready with ${backlog} jobs but not in the ring`);
    if (limitedSet.has(g) !== (st === 'l'))
      problems.push(`group ${g} has status ${st ?? 'idle'} but is ${limitedSet.has(g) ? '' : 'not '}in the rate-limited set`);
    if (parkedSet.has(g) !== (st === 'c'))
      problems.push(`group ${g} has status ${st ?? 'idle'} but is ${parkedSet.has(g) ? '' : 'not '}in the parked set`);
    if (st === 'c' && active === 0) problems.push(`group ${g} is parked at its concurrency with no active job to release it`);
    if (backlog > 0 && st === null) problems.push(`group ${g} has ${backlog} ready jobs but is idle (in no ring, set or pause)`);
  });
  return problems;
}
