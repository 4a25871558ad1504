/** `hopper schedulers list|preview|pause|resume|trigger`: a queue's job schedulers. */
import { nextFireTimes, type JobSchedulerState, type Queue } from 'hopper-queue';
import { UsageError } from '../context.js';
import { instant, table } from '../format.js';
import { intOption, type Command } from './command.js';

function scheduleText(s: JobSchedulerState): string {
  if (s.pattern) return `cron "${s.pattern}"${s.tz ? ` ${s.tz}` : ''}`;
  if (s.every) return `every ${s.every} ms`;
  return '-';
}

async function findScheduler(queue: Queue, id: string | undefined): Promise<JobSchedulerState> {
  if (!id) throw new UsageError('a scheduler id is required');
  const scheduler = await queue.getJobSchedulerState(id);
  if (!scheduler) throw new Error(`No job scheduler "${id}" in queue "${queue.name}".`);
  return scheduler;
}

const list: Command = {
  words: ['schedulers', 'list'],
  summary: "list a queue's job schedulers with their schedule and next run",
  usage: 'hopper schedulers list <queue>',
  async run(ctx, { positionals }) {
    const queue = await ctx.queue(positionals[0]);
    const schedulers: JobSchedulerState[] = [];
    for (let start = 0; ; start += 1000) {
      const page = await queue.getJobSchedulerStates(start, start + 999, true);
      schedulers.push(...page);
      if (page.length < 1000) break;
    }
    ctx.print(schedulers, (rows) =>
      rows.length === 0
        ? 'No job scheduler.'
        : table(
            ['ID', 'JOB NAME', 'SCHEDULE', 'STATE', 'NEXT RUN'],
            rows.map((s) => [s.key, s.name, scheduleText(s), s.paused ? 'paused' : 'active', instant(s.next)]),
          ),
    );
  },
};

const preview: Command = {
  words: ['schedulers', 'preview'],
  summary: "show a scheduler's next run times (UTC and its time zone), by the scheduler's own rules",
  usage: 'hopper schedulers preview <queue> <id> [--count 10]',
  options: { count: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const count = intOption(values, 'count', 10, 1);
    const queue = await ctx.queue(positionals[0]);
    const s = await findScheduler(queue, positionals[1]);
    const repeat = {
      ...(s.pattern ? { pattern: s.pattern } : {}),
      ...(s.every ? { every: s.every } : {}),
      ...(s.offset ? { offset: s.offset } : {}),
      ...(s.tz ? { tz: s.tz } : {}),
      ...(s.startDate ? { startDate: s.startDate } : {}),
      ...(s.endDate ? { endDate: s.endDate } : {}),
    };
    const from = Date.now();
    const times = nextFireTimes(repeat, { from, count }).map((at) => ({
      utc: new Date(at).toISOString(),
      local: s.tz ? new Date(at).toLocaleString('sv-SE', { timeZone: s.tz }) : null,
    }));
    ctx.print({ id: s.key, schedule: scheduleText(s), next: times }, (p) =>
      [
        `${p.id}: ${p.schedule}`,
        table(
          ['UTC', s.tz ? `LOCAL (${s.tz})` : 'LOCAL'],
          p.next.map((t) => [t.utc, t.local ?? '-']),
        ),
      ].join('\n'),
    );
  },
};

function toggle(word: 'pause' | 'resume'): Command {
  return {
    words: ['schedulers', word],
    summary: word === 'pause' ? 'pause a scheduler (no occurrence is created until resumed)' : 'resume a paused scheduler',
    usage: `hopper schedulers ${word} <queue> <id>`,
    async run(ctx, { positionals }) {
      const queue = await ctx.queue(positionals[0]);
      const id = (await findScheduler(queue, positionals[1])).key;
      const changed = word === 'pause' ? await queue.pauseJobScheduler(id) : await queue.resumeJobScheduler(id);
      ctx.print({ id, [word === 'pause' ? 'paused' : 'resumed']: changed }, () =>
        changed ? `${word === 'pause' ? 'paused' : 'resumed'} ${id}` : `${id} was already ${word === 'pause' ? 'paused' : 'running'}`,
      );
    },
  };
}

const trigger: Command = {
  words: ['schedulers', 'trigger'],
  summary: "run a scheduler's job now, once (its schedule is unchanged)",
  usage: 'hopper schedulers trigger <queue> <id>',
  async run(ctx, { positionals }) {
    const queue = await ctx.queue(positionals[0]);
    const id = (await findScheduler(queue, positionals[1])).key;
    const job = await queue.triggerJobScheduler(id);
    ctx.print({ id, jobId: job?.id ?? null }, (r) => (r.jobId ? `triggered ${id}: job ${r.jobId}` : `${id}: no job created`));
  },
};

export const schedulerCommands: Command[] = [list, preview, toggle('pause'), toggle('resume'), trigger];
