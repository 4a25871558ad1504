// Network-namespace rows: one worker process runs in a network namespace of its own, joined to
// the host by a veth pair (lib/netns.mjs: the host end 10.200.0.1, where the row's Redis listens
// too; the worker's end 10.200.0.2), and the link is cut (`ip link set <host end> down`) shorter
// and longer than the lock. Unlike the fault proxy's rows, the cut goes through the kernel's TCP:
// nothing is closed, nothing is refused, segments are retransmitted with TCP's backoff. On a
// machine where namespaces cannot be created (no root, no CAP_NET_ADMIN / CAP_SYS_ADMIN, a
// container), the rows are skipped, loudly, with the reason.
import { readlinkSync } from 'node:fs';
import { LOCK, sleep } from './lib/run-row.mjs';
import { NETNS, NetNs, netnsUnsupported } from './lib/netns.mjs';
import { RedisProc } from './lib/redis.mjs';
import { base, PAST_LOCK_MS, produce, produceUntilResumed, resumedCriteria, work } from './lib/row-kit.mjs';

/**
 * The short cut: shorter than the lock minus a renewal interval, with room for TCP's
 * retransmission backoff (a segment lost at the start of a 0.6 s cut is retransmitted 0.2, 0.6 and
 * 1.4 s after it was sent: delivered within about 1.2 s, inside the renewal margin of 1.5 s).
 */
const SHORT_CUT_MS = 600;

/** How long the worker in the namespace may take to connect through the veth pair. */
const READY_MS = 15_000;

/** The row's Redis, listening on loopback and on the veth pair's host end, and the namespace. */
class NetnsTopology {
  constructor() {
    this.ns = new NetNs();
    this.redis = new RedisProc({ extra: ['--bind', '127.0.0.1', NETNS.hostAddr, '--protected-mode', 'no'] });
  }

  get port() {
    return this.redis.port;
  }

  get url() {
    return this.redis.url;
  }

  get connection() {
    return this.redis.connection;
  }

  /** The namespace first: Redis binds the veth pair's host address. */
  async start() {
    if (!this.ns.created) this.ns.create();
    await this.redis.start();
  }

  async stop() {
    try {
      await this.redis.stop();
    } finally {
      this.ns.destroy();
    }
  }
}

function inOtherNetns(pid) {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`) !== readlinkSync('/proc/self/ns/net');
  } catch {
    return false;
  }
}

/**
 * Starts one more worker process inside the namespace (connecting to Redis through the veth
 * pair), lets it take work for 2 s, cuts the link for `ms` and heals it. The process is recorded
 * as faulted for the duration (its jobs may be redone by others).
 */
async function cutWorker(ctx, ms) {
  const topo = ctx.redis;
  const url = `redis://${NETNS.hostAddr}:${topo.port}`;
  const spawned = ctx.pool.spawn({ url, connection: url }, { exec: topo.ns.exec });
  let timer;
  const child = await Promise.race([
    spawned,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the worker in the namespace did not connect to ${url} within ${READY_MS} ms`)), READY_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  if (child.exitCode !== null || child.signalCode !== null)
    throw new Error(`the worker in the namespace exited (${child.exitCode ?? child.signalCode})`);
  ctx.notes.isolatedPid = child.pid;
  ctx.notes.inNamespace = inOtherNetns(child.pid);
  await sleep(2_000);
  const entry = { kind: 'network', pid: child.pid, at: Date.now() };
  ctx.pool.faults.push(entry);
  topo.ns.cut();
  try {
    await sleep(ms);
  } finally {
    topo.ns.heal();
  }
  entry.until = Date.now();
  ctx.notes.cutMs = entry.until - entry.at;
  ctx.notes.healedAt = entry.until;
}

/** The worker in the namespace really ran there, and held jobs when the link was cut. */
function namespaceCriteria(m, ctx) {
  const out = [];
  const { isolatedPid: pid, healedAt, cutMs } = ctx.notes;
  if (!ctx.notes.inNamespace) out.push('the isolated worker did not run in a network namespace of its own');
  const cutAt = healedAt - cutMs;
  const held = [...m.starts.values()].filter((list) => list.some((r) => r.pid === pid && r.at < cutAt)).length;
  if (!held) out.push('the worker in the namespace took no job before the cut: nothing was tested');
  ctx.notes.after = m.records.filter((r) => r.pid === pid && r.t === 'effect' && r.at > healedAt).length;
  return out;
}

const needs = () => {
  const why = netnsUnsupported();
  return why && { reason: `unsupported here: ${why}` };
};

export const NETNS_ROWS = [
  {
    id: 'netns-cut-short',
    title: `Network cut (veth link down) between a worker in its own namespace and Redis, ${SHORT_CUT_MS} ms: shorter than the lock`,
    promise:
      "A network cut shorter than the lock (minus a renewal interval, TCP's retransmission backoff included) costs nothing: TCP delivers what was sent once the link is back; no stall, no duplicate.",
    needs,
    topology: () => new NetnsTopology(),
    workers: 2,
    produce: produce(300, 40, work(200, 300)),
    inject: (ctx) => cutWorker(ctx, SHORT_CUT_MS),
    verdict: (m, ctx) => {
      const out = [...base(m, { dupes: 'none' }), ...namespaceCriteria(m, ctx)];
      if (m.stalled) out.push(`${m.stalled} stalls`);
      if (!ctx.notes.after) out.push('the worker in the namespace took no job after the cut');
      return out;
    },
  },
  {
    id: 'netns-cut-long',
    title: `Network cut (veth link down) between a worker in its own namespace and Redis, ${PAST_LOCK_MS} ms: longer than the lock (lock ${LOCK.lockDuration} ms)`,
    promise:
      "A network cut longer than the lock: the cut-off worker's jobs are rescued and redone by the others, its late completions rejected, and it takes work again once the link is back (default connection options).",
    needs,
    topology: () => new NetnsTopology(),
    workers: 2,
    produce: produceUntilResumed,
    inject: (ctx) => cutWorker(ctx, PAST_LOCK_MS),
    drainMs: 30_000,
    verdict: (m, ctx) => [...base(m), ...resumedCriteria(m, ctx), ...namespaceCriteria(m, ctx)],
  },
];
