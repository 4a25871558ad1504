// The soak tier: one long row with random faults of every kind the quick tier injects one at a
// time (worker SIGKILL, SIGSTOP past the lock, SIGTERM; Redis SIGKILL with AOF always, Redis
// freeze) under a steady load, then the same checks: lost 0, stuck 0, every duplicate explained.
import { LOCK, sleep } from './lib/run-row.mjs';

const FAULTS = ['worker-kill', 'worker-kill', 'worker-kill', 'worker-stop', 'worker-term', 'redis-kill', 'redis-freeze'];

export function soakRows(minutes) {
  const ms = minutes * 60_000;
  const perSecond = 40;
  return [
    {
      id: 'soak',
      title: `Random faults for ${minutes} minutes`,
      promise:
        'Under any mix of process crashes, freezes, shutdowns and Redis restarts (AOF always), no acknowledged job is lost or stuck.',
      redis: { persistence: 'always' },
      maxStalledCount: 3,
      produce: (ctx) =>
        ctx.producer.run({
          count: Math.floor((ms / 1000) * perSecond),
          perSecond,
          data: () => ({ ms: 20 + Math.floor(ctx.rand() * 200) }),
        }),
      inject: async (ctx) => {
        const end = Date.now() + ms - 5_000;
        ctx.notes.injected = {};
        while (Date.now() < end) {
          await sleep(2_000 + Math.floor(ctx.rand() * 6_000));
          const kind = FAULTS[Math.floor(ctx.rand() * FAULTS.length)];
          ctx.notes.injected[kind] = (ctx.notes.injected[kind] ?? 0) + 1;
          const child = ctx.pool.pick(ctx.rand);
          if (kind === 'worker-kill') ctx.pool.signal(child, 'SIGKILL');
          else if (kind === 'worker-term') ctx.pool.signal(child, 'SIGTERM');
          else if (kind === 'worker-stop' && child)
            await ctx.pool.freeze(child, LOCK.lockDuration + 1_000 + Math.floor(ctx.rand() * 4_000));
          else if (kind === 'redis-kill') {
            const from = Date.now();
            await ctx.redis.kill();
            await sleep(200 + Math.floor(ctx.rand() * 2_000));
            await ctx.redis.start();
            ctx.windows.push({ from: from - 1_000, to: Date.now() + LOCK.lockDuration });
          } else if (kind === 'redis-freeze') {
            const from = Date.now();
            ctx.redis.freeze();
            await sleep(1_000 + Math.floor(ctx.rand() * 7_000));
            ctx.redis.thaw();
            ctx.windows.push({ from, to: Date.now() + LOCK.lockDuration });
          }
        }
      },
      drainMs: 60_000,
      verdict: (m) => {
        const out = [];
        if (m.lost) out.push(`lost ${m.lost} (${m.samples.lost.join(', ')})`);
        if (m.stuck) out.push(`stuck ${m.stuck} (${m.samples.stuck.join(', ')})`);
        if (m.unexpected) out.push(`unexpected ${m.unexpected}`);
        if (m.recordsLost) out.push(`records lost ${m.recordsLost} (${m.samples.recordsLost.join(', ')})`);
        if (m.unexplainedDuplicates) out.push(`unexplained duplicates ${m.unexplainedDuplicates} (${m.samples.unexplained.join(', ')})`);
        if (!m.drained) out.push('the queue did not drain');
        return out;
      },
    },
  ];
}
