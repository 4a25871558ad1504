/** `hopper queues`: every queue under the prefix with its counts. */
import type { QueueOverview } from 'hopper-queue';
import { duration, table } from '../format.js';
import type { Command } from './command.js';

/**
 * What to say when the prefix holds no queue: its name, and the prefixes that do hold queues on
 * this server (the demo's are under `hopper-demo`, the CLI's default is `hopper`).
 */
export function noQueueMessage(prefix: string, others: { prefix: string; queues: number }[]): string {
  const head = `No queue under the prefix "${prefix}".`;
  if (others.length === 0) return `${head} No other prefix on this server holds Hopper queues either.`;
  const list = others.map((o) => `${o.prefix} (${o.queues} queue${o.queues === 1 ? '' : 's'})`).join(', ');
  return `${head} Prefixes with queues here: ${list}. Choose one with --prefix (or HOPPER_PREFIX), e.g. hopper queues --prefix ${others[0].prefix}`;
}

function render(queues: QueueOverview[]): string {
  return table(
    [
      'QUEUE',
      'STATE',
      'WAITING',
      'PRIORITIZED',
      'DELAYED',
      'ACTIVE',
      'CHILDREN',
      'COMPLETED',
      'FAILED',
      'WORKERS',
      'SCHEDULERS',
      'OLDEST WAITING',
    ],
    queues.map((q) => [
      q.name,
      q.paused ? 'paused' : 'running',
      q.counts.waiting,
      q.counts.prioritized,
      q.counts.delayed,
      q.counts.active,
      q.counts['waiting-children'],
      q.counts.completed,
      q.counts.failed,
      q.workers,
      q.schedulers,
      duration(q.oldestWaitingMs),
    ]),
  );
}

export const queuesCommand: Command = {
  words: ['queues'],
  summary: 'list the queues under the prefix, with jobs per state, workers and the oldest waiting job',
  usage: 'hopper queues [<queue>...]',
  async run(ctx, { positionals }) {
    const queues = await ctx.admin.overview(positionals.length > 0 ? positionals : undefined);
    if (queues.length === 0 && !ctx.options.json) {
      const others = (await ctx.admin.listPrefixes()).filter((o) => o.prefix !== ctx.options.prefix);
      ctx.print(queues, () => noQueueMessage(ctx.options.prefix, others));
      return;
    }
    ctx.print(queues, render);
  },
};
