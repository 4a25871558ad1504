/** `hopper queues`: every queue under the prefix with its counts. */
import type { QueueOverview } from 'hopper-queue';
import { duration, table } from '../format.js';
import type { Command } from './command.js';

function render(queues: QueueOverview[]): string {
  if (queues.length === 0) return 'No queue under this prefix.';
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
    ctx.print(queues, render);
  },
};
