/**
 * The invariant audit: every job is in exactly one state structure, and that structure agrees
 * with the state stored on the job. Used after every engine test, and by the doctor later.
 * Reads whole structures: meant for tests and audits, not for hot paths on huge queues.
 */
import type { RedisClient } from './connection.js';
import { publicKeyOf, type QueueKeys } from './keys.js';
import { parseParentLink } from './replies.js';
import { checkGroups, knownGroups, readGroupQueues } from './invariants-groups.js';

const STRUCTURES = ['wait', 'prio', 'delayed', 'active', 'completed', 'failed', 'waitingChildren'] as const;
type Structure = (typeof STRUCTURES)[number];

const STATE_OF: Record<Structure, string> = {
  wait: 'waiting',
  prio: 'prioritized',
  delayed: 'delayed',
  active: 'active',
  completed: 'completed',
  failed: 'failed',
  waitingChildren: 'waiting-children',
};

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

async function scanAll(client: RedisClient, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = (await client.call('SCAN', [cursor, 'MATCH', pattern, 'COUNT', 10000])) as [string, string[]];
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** Returns a description of every violation found (empty when the queue is sound). */
export async function checkQueueInvariants(client: RedisClient, keys: QueueKeys): Promise<string[]> {
  const problems: string[] = [];
  const where = new Map<string, Structure[]>();
  const [wait, ...sets] = await Promise.all([
    client.lrange(keys.wait, 0, -1),
    ...STRUCTURES.slice(1).map((s) => client.zrange(keys[s], 0, -1)),
  ]);
  const members: [Structure, string[]][] = [['wait', wait], ...STRUCTURES.slice(1).map((s, i): [Structure, string[]] => [s, sets[i]])];
  for (const [structure, ids] of members) {
    for (const id of ids) {
      const list = where.get(id) ?? [];
      list.push(structure);
      where.set(id, list);
    }
  }
  for (const [id, list] of where) {
    if (list.length > 1) problems.push(`job ${id} is in ${list.length} structures: ${list.join(', ')}`);
  }
  const queued = await scanAll(client, `${globEscape(keys.base)}gq:*`);
  const groups = await knownGroups(
    client,
    keys,
    queued.map((key) => key.slice(keys.base.length + 3)),
  );
  const membership = await readGroupQueues(client, keys, groups);
  const grouped: { id: string; state: string; group: string; counted: boolean }[] = [];

  const jobPrefix = `${keys.base}j:`;
  const jobKeys = await scanAll(client, `${globEscape(jobPrefix)}*`);
  const ids = new Set(jobKeys.map((key) => key.slice(jobPrefix.length)));
  const pipeline = client.pipeline();
  for (const id of ids) pipeline.hmget(keys.job(id), 's', 'tk', 'n', 'pl', 'us', 'cf', 'g', 'ga');
  const rows = ((await pipeline.exec()) ?? []) as [unknown, (string | null)[]][];
  const children: { id: string; state: string; parentBase: string; parentId: string; policy: string }[] = [];
  const parents: string[] = [];
  let i = 0;
  for (const id of ids) {
    const [state, token, name, link, unsealed, continued, group, counted] = rows[i++][1];
    if (group !== null && state !== null) grouped.push({ id, state, group, counted: counted === '1' });
    if (link !== null && state !== null) {
      const parent = parseParentLink(link);
      children.push({ id, state, parentBase: parent.base, parentId: parent.id, policy: link.slice(0, link.indexOf('\n')) });
    }
    if (state === 'waiting-children' && unsealed === null && continued === null) parents.push(id);
    const list = where.get(id) ?? [];
    // A grouped ready job is in its group's queue (checked by checkGroups), nowhere else.
    if (group !== null && (state === 'waiting' || state === 'prioritized') && membership.has(id)) {
      if (list.length > 0) problems.push(`grouped job ${id} (${state}) is also in ${list.join(', ')}`);
      const place = membership.get(id)?.[0];
      if (place && place.state !== state) problems.push(`job ${id} stores state ${state} but its group queue scores it ${place.state}`);
      continue;
    }
    if (name === null) problems.push(`job ${id} has no name`);
    if (state === null) {
      problems.push(`job ${id} has no stored state`);
      continue;
    }
    if (list.length === 0) {
      problems.push(`job ${id} (state ${state}) is in no state structure`);
      continue;
    }
    if (list.length === 1 && STATE_OF[list[0]] !== state) {
      problems.push(`job ${id} stores state ${state} but is in ${list[0]}`);
    }
    // A finished job's token is '' (cleared in the same write that finished it).
    const hasToken = token !== null && token !== '';
    if (state === 'active' && !hasToken) problems.push(`active job ${id} has no lock token`);
    if (state !== 'active' && hasToken) problems.push(`job ${id} in state ${state} still has a lock token`);
  }
  for (const [id, list] of where) {
    if (!ids.has(id)) problems.push(`job ${id} is in ${list.join(', ')} but its hash is missing`);
  }
  for (const [id, places] of membership) {
    if (!ids.has(id)) problems.push(`job ${id} is in group queue ${places[0].group} but its hash is missing`);
  }
  problems.push(...(await checkGroups(client, keys, groups, membership, grouped)));
  problems.push(...(await checkFlows(client, keys, children, parents)));
  return problems;
}

/**
 * Flow invariants: a sealed parent in waiting-children has a pending child (else it would wait
 * forever), and an unfinished child is among its unfinished parent's pending children (else its
 * completion would not count), unless its parent let go of it when it failed (its policy 'i' or
 * 'c' records the failure on the parent, 'r' drops the dependency) and it was retried since: it
 * then runs on its own.
 */
async function checkFlows(
  client: RedisClient,
  keys: QueueKeys,
  children: { id: string; state: string; parentBase: string; parentId: string; policy: string }[],
  parents: string[],
): Promise<string[]> {
  const problems: string[] = [];
  if (parents.length > 0) {
    const pipeline = client.pipeline();
    for (const id of parents) pipeline.scard(keys.deps(id));
    const counts = ((await pipeline.exec()) ?? []) as [unknown, number][];
    parents.forEach((id, n) => {
      if (Number(counts[n][1]) === 0) problems.push(`parent ${id} waits for children but none is pending`);
    });
  }
  const unfinished = children.filter((c) => c.state !== 'completed' && c.state !== 'failed');
  if (unfinished.length > 0) {
    const pipeline = client.pipeline();
    for (const c of unfinished) {
      const key = publicKeyOf(keys.base, c.id);
      pipeline.hget(`${c.parentBase}j:${c.parentId}`, 's');
      pipeline.sismember(`${c.parentBase}dp:${c.parentId}`, key);
      pipeline.hexists(`${c.parentBase}ig:${c.parentId}`, key);
    }
    const replies = ((await pipeline.exec()) ?? []) as [unknown, unknown][];
    unfinished.forEach((c, n) => {
      const parentState = replies[3 * n][1] as string | null;
      const pending = Number(replies[3 * n + 1][1]) === 1;
      const letGo = c.policy === 'r' || ((c.policy === 'i' || c.policy === 'c') && Number(replies[3 * n + 2][1]) === 1);
      if (parentState !== null && parentState !== 'completed' && parentState !== 'failed' && !pending && !letGo) {
        problems.push(`child ${c.id} (${c.state}) is not among the pending children of its parent ${c.parentId} (${parentState})`);
      }
    });
  }
  return problems;
}
