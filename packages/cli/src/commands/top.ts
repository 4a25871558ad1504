/**
 * `hopper top`: a live view of every queue, redrawn every `--interval`: jobs completed and failed
 * per second (from each queue's event stream), backlog per state, workers, and the age of the
 * oldest waiting job. On a terminal it redraws in place; elsewhere it prints one frame per
 * interval. `--iterations n` stops after n frames (scripts, tests).
 */
import { QueueEvents, type QueueOverview } from 'hopper-queue';
import { UsageError, type Context } from '../context.js';
import { duration, table } from '../format.js';
import { intOption, MAX_TIMER_MS, type Command } from './command.js';
import { parseDuration } from './queue-ops.js';

/** Completions and failures counted from one queue's events since the last frame. */
interface Rates {
  completed: number;
  failed: number;
}

/** One frame: what `--json` prints per interval, one JSON object per line. */
interface Frame {
  at: string;
  intervalMs: number;
  queues: (QueueOverview & { completedPerSec: number; failedPerSec: number })[];
}

function render(frame: Frame): string {
  const rows = frame.queues.map((q) => [
    q.name,
    q.paused ? 'paused' : 'running',
    q.completedPerSec.toFixed(1),
    q.failedPerSec.toFixed(1),
    q.counts.waiting + q.counts.prioritized,
    q.counts.delayed,
    q.counts.active,
    q.counts.failed,
    q.workers,
    duration(q.oldestWaitingMs),
  ]);
  const header = `hopper top  ${frame.at}  every ${duration(frame.intervalMs)}  (Ctrl-C to quit)`;
  if (rows.length === 0) return `${header}\n\nNo queue under this prefix.`;
  return `${header}\n\n${table(['QUEUE', 'STATE', 'DONE/S', 'FAILED/S', 'READY', 'DELAYED', 'ACTIVE', 'FAILED', 'WORKERS', 'OLDEST WAITING'], rows)}`;
}

async function watch(ctx: Context, names: string[], rates: Map<string, Rates>, readers: Map<string, QueueEvents>): Promise<void> {
  for (const name of names) {
    if (readers.has(name)) continue;
    const rate: Rates = { completed: 0, failed: 0 };
    rates.set(name, rate);
    const events = new QueueEvents(name, { connection: ctx.options.redis, prefix: ctx.options.prefix });
    events.on('completed', () => rate.completed++);
    events.on('failed', () => rate.failed++);
    events.on('error', () => undefined); // the next frame's counts show a broken connection
    readers.set(name, events);
    await new Promise((resolve) => events.once('ready', resolve));
  }
}

export const topCommand: Command = {
  words: ['top'],
  summary: 'a live view of every queue: completed and failed per second, backlog, workers (Ctrl-C to quit)',
  usage: 'hopper top [<queue>...] [--interval 2s] [--iterations n]',
  options: { interval: { type: 'string' }, iterations: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const intervalMs = parseDuration(typeof values.interval === 'string' ? values.interval : '2s', 'interval');
    if (intervalMs < 100) throw new UsageError('--interval must be at least 100ms');
    if (intervalMs > MAX_TIMER_MS) throw new UsageError(`--interval must be at most ${MAX_TIMER_MS}ms (about 24.8 days)`);
    const iterations = intOption(values, 'iterations', 0);
    const live = ctx.io.stdout.isTTY === true && !ctx.options.json;
    const rates = new Map<string, Rates>();
    const readers = new Map<string, QueueEvents>();
    let stop = false;
    const onSignal = (): void => {
      stop = true;
    };
    process.once('SIGINT', onSignal);
    try {
      const names = positionals.length > 0 ? positionals : await ctx.admin.listQueues();
      for (const name of positionals) await ctx.queue(name); // unknown names fail here
      await watch(ctx, names, rates, readers);
      let last = Date.now();
      for (let frame = 1; !stop; frame++) {
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
        const now = Date.now();
        const elapsed = (now - last) / 1000;
        last = now;
        // Queues created since the start appear in the next frame.
        const current = positionals.length > 0 ? names : await ctx.admin.listQueues();
        await watch(ctx, current, rates, readers);
        const overviews = await ctx.admin.overview(current);
        const out: Frame = {
          at: new Date(now).toISOString(),
          intervalMs,
          queues: overviews.map((q) => {
            const r = rates.get(q.name) ?? { completed: 0, failed: 0 };
            const row = { ...q, completedPerSec: r.completed / elapsed, failedPerSec: r.failed / elapsed };
            r.completed = 0;
            r.failed = 0;
            return row;
          }),
        };
        if (ctx.options.json) {
          ctx.io.stdout.write(`${JSON.stringify(out)}\n`); // one frame per line (JSON Lines)
        } else {
          if (live) ctx.io.stdout.write('\x1b[H\x1b[2J');
          ctx.io.stdout.write(`${render(out)}\n`);
        }
        if (iterations > 0 && frame >= iterations) break;
      }
    } finally {
      process.off('SIGINT', onSignal);
      await Promise.all([...readers.values()].map((r) => r.close()));
    }
  },
};
