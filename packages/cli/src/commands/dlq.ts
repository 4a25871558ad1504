/** `hopper dlq list|replay`: a dead-letter queue's letters, and putting them back. */
import type { Job, ReplayDeadLettersOptions } from 'hopper-queue';
import { UsageError } from '../context.js';
import { clip, instant, table } from '../format.js';
import { intOption, type Command } from './command.js';

/** A dead letter as the CLI prints it. */
interface LetterRow {
  id: string;
  name: string;
  originQueue: string;
  originJobId: string;
  failedOn: number | null;
  failedReason: string | null;
}

const list: Command = {
  words: ['dlq', 'list'],
  summary: 'list the dead letters of a dead-letter queue (oldest first)',
  usage: 'hopper dlq list <dead-letter-queue> [--limit 20] [--offset 0]',
  options: { limit: { type: 'string' }, offset: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const limit = intOption(values, 'limit', 20, 1);
    let skip = intOption(values, 'offset', 0);
    const queue = await ctx.queue(positionals[0]);
    const rows: LetterRow[] = [];
    // Dead letters are the jobs of this queue that carry their origin; page through them.
    for (const state of ['waiting', 'completed', 'failed'] as const) {
      for (let start = 0; rows.length < limit; start += 1000) {
        const jobs: Job[] = await queue.getJobs(state, start, start + 999, true);
        for (const job of jobs) {
          if (!job.deadLetterOrigin || rows.length >= limit) continue;
          if (skip > 0) {
            skip -= 1;
            continue;
          }
          rows.push({
            id: String(job.id),
            name: job.name,
            originQueue: job.deadLetterOrigin.queue,
            originJobId: job.deadLetterOrigin.jobId,
            failedOn: job.deadLetterOrigin.failedOn ?? null,
            failedReason: job.failedReason || null,
          });
        }
        if (jobs.length < 1000) break;
      }
    }
    ctx.print(rows, (r) =>
      r.length === 0
        ? 'No dead letter.'
        : table(
            ['ID', 'NAME', 'FROM', 'FAILED', 'FAILED REASON'],
            r.map((l) => [l.id, l.name, `${l.originQueue}/${l.originJobId}`, instant(l.failedOn), clip(l.failedReason)]),
          ),
    );
  },
};

const replay: Command = {
  words: ['dlq', 'replay'],
  summary: 'put dead letters back into their origin queues (all, or those matching the filters)',
  usage: 'hopper dlq replay <dead-letter-queue> [<id>...] [--name n] [--reason-contains text] [--since ISO-date] [--limit n] [--yes]',
  options: {
    name: { type: 'string' },
    'reason-contains': { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(ctx, { positionals, values }) {
    const opts: ReplayDeadLettersOptions = {};
    if (positionals.length > 1) opts.ids = positionals.slice(1);
    if (typeof values.name === 'string') opts.name = values.name;
    if (typeof values['reason-contains'] === 'string') opts.failedReasonContains = values['reason-contains'];
    if (typeof values.since === 'string') {
      const since = Date.parse(values.since);
      if (Number.isNaN(since)) throw new UsageError(`--since must be a date (ISO 8601, e.g. 2026-12-01T08:00:00Z), not "${values.since}"`);
      opts.since = since;
    }
    if (values.limit !== undefined) opts.limit = intOption(values, 'limit', 0, 1);
    const queue = await ctx.queue(positionals[0]);
    const filters = Object.keys(opts).length > 0 ? 'the matching' : 'all the';
    await ctx.confirm(`Replay ${filters} dead letters of "${queue.name}" into their origin queues?`);
    opts.onProgress = (p) => ctx.progress('replaying', p.replayed);
    const result = await queue.replayDeadLetters(opts);
    ctx.progressDone();
    ctx.print(result, (r) =>
      [
        `replayed ${r.replayed}`,
        ...(r.refused.length > 0
          ? [`kept ${r.refused.length} (their origin job exists and is not failed): ${r.refused.slice(0, 20).join(', ')}`]
          : []),
      ].join('\n'),
    );
  },
};

export const dlqCommands: Command[] = [list, replay];
