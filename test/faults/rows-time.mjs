// Clock rows: the worker processes' wall clocks jump (libfaketime, preloaded: Date.now() and
// every wall-clock read of the process jump; timers, on the monotonic clock, do not). Hopper
// decides due-ness, lock deadlines, stalls and scheduler instants with Redis TIME, so a worker's
// clock must change nothing: the rows prove it on delayed jobs, stall detection and a scheduler.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './lib/run-row.mjs';
import { base, isOccurrence, schedulerCriteria, startScheduler, stopScheduler } from './lib/row-kit.mjs';
import { libfaketime, needs } from './lib/tools.mjs';

/** How much later than due a delayed job may start (claim latency on a loaded machine), ms. */
const LATE_MS = 3_000;

function clockRow(id, offset, offsetMs) {
  const file = (ctx) => join(ctx.dir, 'faketime');
  return {
    id,
    title: `Worker clocks jump ${offset} mid-run (faketime), delayed jobs and a job scheduler`,
    promise: `A worker whose clock jumps ${offset} runs no delayed job early or late, detects no false stall, and creates no scheduler occurrence twice: Hopper takes time from Redis TIME.`,
    needs: needs.faketime,
    env: (dir) => {
      writeFileSync(join(dir, 'faketime'), '+0\n');
      return {
        LD_PRELOAD: libfaketime(),
        FAKETIME_TIMESTAMP_FILE: join(dir, 'faketime'),
        FAKETIME_CACHE_DURATION: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      };
    },
    workerConfig: { realClock: true },
    unledgered: isOccurrence,
    produce: async (ctx) => {
      await startScheduler(ctx, 1_000);
      // A third of the jobs delayed 2 to 5 s, so many fall due after the jump.
      await ctx.producer.run({
        count: 300,
        perSecond: 30,
        data: (i) => (i % 3 === 0 ? { ms: 20, delayed: true } : { ms: 20 + (i % 5) * 20 }),
        opts: (i) => (i % 3 === 0 ? { delay: 2_000 + (i % 7) * 500 } : {}),
      });
      await sleep(6_000);
    },
    inject: async (ctx) => {
      await sleep(3_000);
      writeFileSync(file(ctx), `${offset}\n`);
      ctx.notes.jumpAt = Date.now();
    },
    heal: (ctx) => stopScheduler(ctx),
    verdict: (m, ctx) => {
      const out = [...base(m, { dupes: 'none' }), ...schedulerCriteria(m, ctx, { lateMs: LATE_MS, counted: true })];
      if (m.stalled) out.push(`${m.stalled} stalls (false: no worker was slow, only its clock moved)`);
      if (m.failed) out.push(`failed ${m.failed}`);
      let early = 0;
      let late = 0;
      let jumped = 0;
      let delayed = 0;
      for (const r of m.records) {
        if (r.t !== 'start' || r.due === undefined) continue;
        delayed++;
        if (r.at < r.due - 100) early++;
        if (r.at > r.due + LATE_MS) late++;
        if (r.at > ctx.notes.jumpAt + 1_500 && Math.abs(r.local - r.at - offsetMs) < 5_000) jumped++;
      }
      ctx.notes.delayed = { ran: delayed, early, late, startedOnAJumpedClock: jumped };
      ctx.notes.blockedLoopWarnings = m.records.filter((r) => r.t === 'warning' && r.code === 'HOPPER_EVENT_LOOP_BLOCKED').length;
      if (!jumped) out.push('no delayed job started on a jumped clock: the jump did not happen, nothing was tested');
      if (early) out.push(`${early} delayed jobs started before they were due`);
      if (late) out.push(`${late} delayed jobs started more than ${LATE_MS} ms after they were due`);
      return out;
    },
  };
}

export const TIME_ROWS = [clockRow('clock-jump-forward', '+1h', 3_600_000), clockRow('clock-jump-back', '-1h', -3_600_000)];
