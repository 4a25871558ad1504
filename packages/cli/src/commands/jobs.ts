/** `hopper jobs list|show|retry|remove|promote|cancel`: one queue's jobs. */
import { JOB_STATES, type Job, type JobState, type Queue } from 'hopper-queue';
import { UsageError, type Context } from '../context.js';
import { clip, instant, table } from '../format.js';
import { intOption, type Command, type CommandArgs } from './command.js';

/** A job as the CLI prints it (and as `--json` gives it). */
interface JobRow {
  id: string;
  name: string;
  state: string;
  attemptsMade: number;
  timestamp: number;
  processedOn: number | null;
  finishedOn: number | null;
  failedReason: string | null;
}

function rowOf(job: Job, state: string): JobRow {
  return {
    id: String(job.id),
    name: job.name,
    state,
    attemptsMade: job.attemptsMade,
    timestamp: job.timestamp,
    processedOn: job.processedOn ?? null,
    finishedOn: job.finishedOn ?? null,
    failedReason: job.failedReason || null,
  };
}

function parseStates(raw: CommandArgs['values'][string]): JobState[] {
  if (typeof raw !== 'string') return [...JOB_STATES];
  const states = raw.split(',').map((s) => s.trim());
  for (const state of states) {
    if (!(JOB_STATES as readonly string[]).includes(state)) {
      throw new UsageError(`--state "${state}" is not a job state (one of: ${JOB_STATES.join(', ')})`);
    }
  }
  return states as JobState[];
}

const list: Command = {
  words: ['jobs', 'list'],
  summary: "list a queue's jobs, newest first (filter by --state, page with --offset/--limit)",
  usage: 'hopper jobs list <queue> [--state failed[,completed...]] [--limit 20] [--offset 0]',
  options: { state: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const states = parseStates(values.state);
    const limit = intOption(values, 'limit', 20, 1);
    const offset = intOption(values, 'offset', 0);
    const queue = await ctx.queue(positionals[0]);
    const rows: JobRow[] = [];
    let skip = offset;
    for (const state of states) {
      if (rows.length >= limit) break;
      const total = (await queue.getJobCounts(state))[state] ?? 0;
      if (skip >= total) {
        skip -= total;
        continue;
      }
      const jobs = await queue.getJobs(state, skip, skip + (limit - rows.length) - 1);
      skip = 0;
      for (const job of jobs) rows.push(rowOf(job, state));
    }
    ctx.print(rows, (r) =>
      r.length === 0
        ? 'No job.'
        : table(
            ['ID', 'NAME', 'STATE', 'ATTEMPTS', 'ADDED', 'FINISHED', 'FAILED REASON'],
            r.map((j) => [j.id, j.name, j.state, j.attemptsMade, instant(j.timestamp), instant(j.finishedOn), clip(j.failedReason)]),
          ),
    );
  },
};

const show: Command = {
  words: ['jobs', 'show'],
  summary: 'show one job: state, options, data, result or failure, recent logs',
  usage: 'hopper jobs show <queue> <id> [--logs 10]',
  options: { logs: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const logCount = intOption(values, 'logs', 10);
    const queue = await ctx.queue(positionals[0]);
    const job = await findJob(queue, positionals[1]);
    const state = await job.getState();
    const logs = logCount > 0 ? await queue.getJobLogs(String(job.id), -logCount, -1) : { logs: [], count: 0 };
    const shown = {
      ...rowOf(job, state),
      data: job.data as unknown,
      opts: job.opts,
      progress: job.progress,
      returnvalue: job.returnvalue as unknown,
      stacktrace: job.stacktrace,
      parentKey: job.parentKey ?? null,
      logs: logs.logs,
      logCount: logs.count,
    };
    ctx.print(shown, (j) =>
      [
        `id:            ${j.id}`,
        `name:          ${j.name}`,
        `state:         ${j.state}`,
        `attempts made: ${j.attemptsMade}`,
        `added:         ${instant(j.timestamp)}`,
        `started:       ${instant(j.processedOn)}`,
        `finished:      ${instant(j.finishedOn)}`,
        ...(j.parentKey ? [`parent:        ${j.parentKey}`] : []),
        ...(j.failedReason ? [`failed reason: ${j.failedReason}`] : []),
        `progress:      ${JSON.stringify(j.progress)}`,
        `options:       ${JSON.stringify(j.opts)}`,
        `data:          ${JSON.stringify(j.data)}`,
        ...(j.returnvalue !== null && j.returnvalue !== undefined ? [`return value:  ${JSON.stringify(j.returnvalue)}`] : []),
        ...(j.stacktrace.length > 0 ? ['stack traces:', ...j.stacktrace.map((s) => `  ${s.split('\n').join('\n  ')}`)] : []),
        `logs:          ${j.logCount}${j.logs.length > 0 ? ` (last ${j.logs.length})` : ''}`,
        ...j.logs.map((line) => `  ${line}`),
      ].join('\n'),
    );
  },
};

async function findJob(queue: Queue, id: string | undefined): Promise<Job> {
  if (!id) throw new UsageError('a job id is required');
  const job = await queue.getJob(id);
  if (!job) throw new JobMissing(`No job "${id}" in queue "${queue.name}".`);
  return job;
}

/** A job named on the command line does not exist: exit code 1, like any failed operation. */
class JobMissing extends Error {
  override readonly name = 'JobNotFoundError';
}

/** Runs `act` for each id, prints one line per id, and returns 1 if any failed. */
async function eachId(ctx: Context, ids: string[], verb: string, act: (id: string) => Promise<string>): Promise<number> {
  if (ids.length === 0) throw new UsageError('at least one job id is required');
  const results: { id: string; ok: boolean; result: string }[] = [];
  for (const id of ids) {
    try {
      results.push({ id, ok: true, result: await act(id) });
    } catch (error) {
      results.push({ id, ok: false, result: error instanceof Error ? error.message : String(error) });
    }
  }
  ctx.print(results, (r) =>
    r.map((x) => `${x.ok ? verb : 'failed'} ${x.id}${x.ok && x.result ? `: ${x.result}` : x.ok ? '' : `: ${x.result}`}`).join('\n'),
  );
  return results.every((x) => x.ok) ? 0 : 1;
}

const retry: Command = {
  words: ['jobs', 'retry'],
  summary: 'move failed (or completed) jobs back to waiting: by id, or --all of a state',
  usage: 'hopper jobs retry <queue> (<id>... | --all [--state failed|completed])',
  options: { all: { type: 'boolean' }, state: { type: 'string' } },
  async run(ctx, args) {
    const state = finishedState(args);
    const queue = await ctx.queue(args.positionals[0]);
    if (args.values.all) {
      if (args.positionals.length > 1) throw new UsageError('give job ids or --all, not both');
      const before = (await queue.getJobCounts(state))[state] ?? 0;
      await ctx.confirm(`Retry all ${before} ${state} jobs of queue "${queue.name}"?`);
      await queue.retryJobs({ state });
      ctx.print({ retried: before, state }, (r) => `retried ${r.retried} ${r.state} jobs`);
      return 0;
    }
    return eachId(ctx, args.positionals.slice(1), 'retried', async (id) => {
      const job = await findJob(queue, id);
      const current = await job.getState();
      if (current !== 'failed' && current !== 'completed') throw new Error(`it is ${current}, not failed or completed`);
      await job.retry(current);
      return '';
    });
  },
};

function finishedState({ values }: CommandArgs): 'failed' | 'completed' {
  const state = values.state ?? 'failed';
  if (state !== 'failed' && state !== 'completed') throw new UsageError(`--state must be failed or completed, not "${String(state)}"`);
  return state;
}

const remove: Command = {
  words: ['jobs', 'remove'],
  summary: 'remove jobs by id (not active ones); asks first unless --yes',
  usage: 'hopper jobs remove <queue> <id>... [--yes]',
  async run(ctx, { positionals }) {
    const queue = await ctx.queue(positionals[0]);
    const ids = positionals.slice(1);
    if (ids.length === 0) throw new UsageError('at least one job id is required');
    await ctx.confirm(`Remove ${ids.length} job${ids.length === 1 ? '' : 's'} from queue "${queue.name}"?`);
    return eachId(ctx, ids, 'removed', async (id) => {
      if ((await queue.remove(id)) === 0) throw new Error(`no job "${id}" in queue "${queue.name}"`);
      return '';
    });
  },
};

const promote: Command = {
  words: ['jobs', 'promote'],
  summary: 'run delayed jobs now: by id, or --all',
  usage: 'hopper jobs promote <queue> (<id>... | --all)',
  options: { all: { type: 'boolean' } },
  async run(ctx, { positionals, values }) {
    const queue = await ctx.queue(positionals[0]);
    if (values.all) {
      if (positionals.length > 1) throw new UsageError('give job ids or --all, not both');
      const before = (await queue.getJobCounts('delayed')).delayed ?? 0;
      await queue.promoteJobs();
      ctx.print({ promoted: before }, (r) => `promoted ${r.promoted} delayed jobs`);
      return 0;
    }
    return eachId(ctx, positionals.slice(1), 'promoted', async (id) => {
      await (await findJob(queue, id)).promote();
      return '';
    });
  },
};

const cancel: Command = {
  words: ['jobs', 'cancel'],
  summary: 'cancel jobs from anywhere: a pending one fails at once, a running one is aborted, for good',
  usage: 'hopper jobs cancel <queue> <id>... [--reason "why"]',
  options: { reason: { type: 'string' } },
  async run(ctx, { positionals, values }) {
    const queue = await ctx.queue(positionals[0]);
    const reason = typeof values.reason === 'string' && values.reason !== '' ? values.reason : 'cancelled from the hopper CLI';
    return eachId(ctx, positionals.slice(1), 'cancel', async (id) => {
      const outcome = await queue.cancelJob(id, reason);
      if (outcome === 'missing') throw new Error(`no job "${id}" in queue "${queue.name}"`);
      return {
        cancelled: 'cancelled (it had not started)',
        signalled: 'signalled (it is running: its worker aborts it)',
        finished: 'already finished, nothing to cancel',
      }[outcome];
    });
  },
};

export const jobsCommands: Command[] = [list, show, retry, remove, promote, cancel];
