/** `hopper pause|resume|clean|drain`: acting on a whole queue. */
import { UsageError } from '../context.js';
import { intOption, type Command } from './command.js';

const pause: Command = {
  words: ['pause'],
  summary: 'pause a queue: its workers finish what they run and take nothing new',
  usage: 'hopper pause <queue>',
  async run(ctx, { positionals }) {
    const queue = await ctx.queue(positionals[0]);
    await queue.pause();
    ctx.print({ queue: queue.name, paused: true }, () => `paused ${queue.name}`);
  },
};

const resume: Command = {
  words: ['resume'],
  summary: 'resume a paused queue',
  usage: 'hopper resume <queue>',
  async run(ctx, { positionals }) {
    const queue = await ctx.queue(positionals[0]);
    await queue.resume();
    ctx.print({ queue: queue.name, paused: false }, () => `resumed ${queue.name}`);
  },
};

const CLEANABLE = ['completed', 'failed', 'waiting', 'prioritized', 'delayed', 'waiting-children'] as const;

const clean: Command = {
  words: ['clean'],
  summary: 'remove jobs of one state older than --grace (completed by default); asks first unless --yes',
  usage:
    'hopper clean <queue> [--state completed|failed|waiting|prioritized|delayed|waiting-children] [--grace 1h|30m|0] [--limit 1000] [--yes]',
  options: { state: { type: 'string' }, grace: { type: 'string' }, limit: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const state = (values.state as string | undefined) ?? 'completed';
    if (!(CLEANABLE as readonly string[]).includes(state)) {
      throw new UsageError(`--state must be one of ${CLEANABLE.join(', ')}, not "${state}" (active jobs are never cleaned)`);
    }
    const graceText = typeof values.grace === 'string' ? values.grace : undefined;
    const grace = parseDuration(graceText, 'grace');
    const limit = intOption(values, 'limit', 0);
    const queue = await ctx.queue(positionals[0]);
    await ctx.confirm(`Remove ${limit > 0 ? `up to ${limit}` : 'all'} ${state} jobs of "${queue.name}" older than ${graceText ?? '0'}?`);
    let removed = 0;
    // Batches of 1,000 until nothing older is left (or --limit reached).
    for (;;) {
      const batch = limit > 0 ? Math.min(1000, limit - removed) : 1000;
      if (batch <= 0) break;
      const ids = await queue.clean(grace, batch, state as (typeof CLEANABLE)[number]);
      removed += ids.length;
      ctx.progress('cleaning', removed, limit > 0 ? limit : undefined);
      if (ids.length < batch) break;
    }
    ctx.progressDone();
    ctx.print({ queue: queue.name, state, removed }, (r) => `removed ${r.removed} ${r.state} jobs from ${r.queue}`);
  },
};

const drain: Command = {
  words: ['drain'],
  summary: 'remove every waiting job (and delayed ones with --delayed); active jobs go on; asks first unless --yes',
  usage: 'hopper drain <queue> [--delayed] [--yes]',
  options: { delayed: { type: 'boolean' } },
  async run(ctx, { positionals, values }) {
    const queue = await ctx.queue(positionals[0]);
    const delayed = values.delayed === true;
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
    const count = counts.waiting + counts.prioritized + (delayed ? counts.delayed : 0);
    await ctx.confirm(`Remove the ${count} waiting${delayed ? ' and delayed' : ''} jobs of "${queue.name}"?`);
    await queue.drain(delayed);
    ctx.print({ queue: queue.name, removed: count }, (r) => `drained ${r.queue}: ${r.removed} jobs removed`);
  },
};

/** `90s`, `30m`, `2h`, `1d`, or milliseconds; `undefined` is 0. `option` names the flag in errors. */
export function parseDuration(raw: string | undefined, option: string): number {
  if (raw === undefined) return 0;
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim());
  if (!m) throw new UsageError(`--${option} must be a duration such as 0, 500ms, 90s, 30m, 2h or 1d, not "${raw}"`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}

export const queueCommands: Command[] = [pause, resume, clean, drain];
