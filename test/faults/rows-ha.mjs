// Rows on replicated deployments: Sentinel (one primary, two replicas, three sentinels) and Redis
// Cluster (three primaries, three replicas), started by the row on loopback ports. Replication is
// asynchronous: a graceful failover must lose nothing, a killed primary may lose the writes its
// replicas had not received, which the rows measure and report.
import { LOCK, sleep } from './lib/run-row.mjs';
import { base, produce } from './lib/row-kit.mjs';
import { SentinelSet } from './lib/sentinel.mjs';
import { ClusterSet } from './lib/cluster.mjs';
import { needs } from './lib/tools.mjs';

/** Most a worker may take to complete a job on the new primary after a switch, ms. */
const FOLLOW_MS = 10_000;

/** Notes the switch and the live worker processes at that moment; the window explains duplicates. */
function noteSwitch(ctx, from, details) {
  const at = Date.now();
  ctx.notes.switch = { ...details, switchedAfterMs: at - from };
  ctx.notes.switchAt = at;
  ctx.notes.workersAtSwitch = ctx.pool.alive().map((c) => c.pid);
  ctx.windows.push({ from: from - 1_000, to: at + LOCK.lockDuration });
}

/** Every worker process alive at the switch completed a job on the new primary within FOLLOW_MS. */
function followCriteria(m, ctx) {
  const out = [];
  const { switchAt, workersAtSwitch = [] } = ctx.notes;
  if (!switchAt) return ['no switch happened: nothing was tested'];
  const follow = {};
  for (const pid of workersAtSwitch) {
    const first = m.records.find((r) => r.pid === pid && r.t === 'completed' && r.at > switchAt);
    const died = ctx.pool.exits.find((x) => x.pid === pid && x.at < switchAt + FOLLOW_MS);
    follow[pid] = first ? first.at - switchAt : died ? 'died' : 'never';
    if (!died && (!first || first.at - switchAt > FOLLOW_MS))
      out.push(`worker ${pid} completed no job on the new primary within ${FOLLOW_MS / 1000} s (${follow[pid]})`);
  }
  ctx.notes.followMs = follow;
  return out;
}

/** For a killed primary: loss allowed (measured), but bounded; nothing stuck, the queue drains. */
function lossyCriteria(m, maxLost) {
  const out = [];
  if (m.stuck) out.push(`stuck ${m.stuck} (${m.samples.stuck.join(', ')})`);
  if (m.unexpected) out.push(`unexpected ${m.unexpected}`);
  if (!m.drained) out.push('the queue did not drain');
  if (m.lost > maxLost) out.push(`lost ${m.lost}: more than ${maxLost}`);
  return out;
}

const sentinel = {
  needs: needs.sentinel,
  topology: () => new SentinelSet(),
  produce: produce(600, 50),
};

const cluster = {
  needs: needs.cluster,
  topology: () => new ClusterSet(),
  produce: produce(600, 50),
};

/** The queue's slot (its keys share the `{queue}` hash tag) and its primary's port. */
async function queueSlot(ctx) {
  const slot = await ctx.redis.slotOf(`${ctx.cfg.prefix}:{${ctx.cfg.queue}}:meta`);
  return { slot, owner: (await ctx.redis.ownerOf(slot)).port };
}

export const HA_ROWS = [
  {
    ...sentinel,
    id: 'sentinel-failover',
    title: 'Sentinel: graceful failover (SENTINEL FAILOVER) under load',
    promise:
      'Connected through Sentinel, a graceful failover loses no acknowledged job, and every worker follows the new primary within 10 s.',
    inject: async (ctx) => {
      await sleep(3_000);
      const from = Date.now();
      const to = await ctx.redis.failover();
      noteSwitch(ctx, from, { from: ctx.redis.initialPrimary, to });
    },
    verdict: (m, ctx) => [...base(m), ...followCriteria(m, ctx)],
  },
  {
    ...sentinel,
    id: 'sentinel-primary-kill',
    title: 'Sentinel: primary SIGKILLed under load (sentinels promote a replica)',
    promise:
      'Connected through Sentinel, a killed primary is replaced (down-after 2 s plus the election) and every worker follows the new one within 10 s of the switch; acknowledged writes the replicas had not received are lost (asynchronous replication): measured here, bounded by about a second of adds.',
    inject: async (ctx) => {
      await sleep(3_000);
      const port = await ctx.redis.primaryPort();
      const from = Date.now();
      await ctx.redis.server(port).kill();
      const to = await ctx.redis.waitForSwitch(port);
      noteSwitch(ctx, from, { from: port, to });
    },
    verdict: (m, ctx) => [...lossyCriteria(m, 50), ...followCriteria(m, ctx)],
  },
  {
    ...cluster,
    id: 'cluster-slot-migration',
    title: "Redis Cluster: the queue's slot migrated to another primary under load",
    promise:
      "A queue (its keys share one hash tag, so one slot) survives a move of its slot between primaries (SETSLOT MIGRATING/IMPORTING, MIGRATE, the jobs' hashes first): nothing lost or stuck. While keys are split, Redis answers the queue's scripts TRYAGAIN: the queue pauses for the move, and a move longer than the lock gets running jobs redone (explained by the move's window).",
    produce: produce(800, 50),
    inject: async (ctx) => {
      await sleep(3_000);
      const { slot } = await queueSlot(ctx);
      const from = Date.now();
      // Small batches with pauses: the move spans about 4 s of live traffic (longer than the lock).
      ctx.notes.migration = await ctx.redis.migrateSlot(slot, { batch: 4, pauseMs: 100, first: /:j:/ });
      ctx.notes.migration.ownerAfter = (await ctx.redis.ownerOf(slot)).port;
      ctx.windows.push({ from, to: Date.now() + LOCK.lockDuration });
    },
    verdict: (m, ctx) => {
      const out = base(m);
      const mig = ctx.notes.migration;
      if (!mig || mig.ownerAfter !== mig.to) out.push('the slot did not move');
      if (mig && mig.keys < 50) out.push(`only ${mig.keys} keys moved: the migration did not overlap the load`);
      return out;
    },
  },
  {
    ...cluster,
    id: 'cluster-failover',
    title: "Redis Cluster: graceful failover (CLUSTER FAILOVER on the replica) of the queue's primary",
    promise: "A graceful failover of the queue's primary loses no acknowledged job, and every worker follows the new primary within 10 s.",
    inject: async (ctx) => {
      await sleep(3_000);
      const { owner } = await queueSlot(ctx);
      const from = Date.now();
      const to = await ctx.redis.failover(owner);
      noteSwitch(ctx, from, { from: owner, to });
    },
    verdict: (m, ctx) => [...base(m), ...followCriteria(m, ctx)],
  },
  {
    ...cluster,
    id: 'cluster-primary-kill',
    title: "Redis Cluster: the queue's primary SIGKILLed under load (its replica takes over)",
    promise:
      "A killed primary's replica takes over after the node timeout (2 s) and every worker follows it within 10 s of the switch; acknowledged writes not yet replicated are lost (asynchronous replication): measured, bounded by about a second of adds.",
    inject: async (ctx) => {
      await sleep(3_000);
      const { slot, owner } = await queueSlot(ctx);
      const from = Date.now();
      await ctx.redis.server(owner).kill();
      const to = await ctx.redis.waitForNewOwner(slot, owner);
      noteSwitch(ctx, from, { from: owner, to });
    },
    verdict: (m, ctx) => [...lossyCriteria(m, 50), ...followCriteria(m, ctx)],
  },
];
