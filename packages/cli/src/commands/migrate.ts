/**
 * `hopper migrate`: moves a live BullMQ queue into Hopper with no job lost (docs/migrating.md),
 * or, with `--to-bullmq`, a Hopper queue back to BullMQ (`--from` then names Hopper's Redis and
 * `--to` BullMQ's), over `hopper-queue/migrate`. Here `--prefix` is BullMQ's key prefix (default
 * `bull`) and `--hopper-prefix` Hopper's. The last line says what moved: `migrated <n> jobs (<per state>),
 * <s> schedulers; lost 0`. Exit codes: 0 every job found is moved (or, with --dry-run, the run
 * would be complete), 1 the run failed (nothing is lost: run again to resume), 2 wrong usage,
 * 3 incomplete: jobs stay in BullMQ for a reason the report gives (held by a BullMQ worker,
 * waiting for a parent, refused), or the counts read back did not match; run again.
 */
import {
  migrateFromBullMQ,
  migrateToBullMQ,
  summaryLine,
  isComplete,
  HOPPER_ONLY,
  type HopperOnlyFeature,
  type MigrationProgress,
  type MigrationReport,
} from 'hopper-queue/migrate';
import { UsageError } from '../context.js';
import { intOption, type Command } from './command.js';

/** Exit code of a run that left jobs in the source (see the module comment). */
export const EXIT_INCOMPLETE = 3;

function describe(event: MigrationProgress, back: boolean): string | undefined {
  const [source, target] = back ? ['Hopper', 'BullMQ'] : ['BullMQ', 'Hopper'];
  switch (event.kind) {
    case 'layout':
      if (back) return `BullMQ layout ${event.version} (meta version ${event.recorded ?? 'not recorded: a new queue'})`;
      return `BullMQ layout ${event.version} (meta version ${event.recorded ?? 'not recorded'})${event.paused ? ', queue paused: the Hopper queue is paused too' : ''}`;
    case 'scheduler':
      return `scheduler ${event.id}: ${event.outcome === 'moved' ? 'moved' : `already in ${target} (kept; removed from ${source})`}`;
    case 'refused':
      return `cannot move ${event.state} job ${event.id}: ${event.why}`;
    case 'waiting':
      if (event.held === 0) return undefined;
      return `waiting for ${event.held} active job(s) held by ${source} workers${event.waitingForParent > 0 ? `, ${event.waitingForParent} waiting for their parent` : ''}`;
    default:
      return undefined;
  }
}

function details(r: MigrationReport): string[] {
  const lines: string[] = [];
  const back = r.direction === 'to-bullmq';
  const [source, target] = back ? ['Hopper', 'BullMQ'] : ['BullMQ', 'Hopper'];
  const states = Object.entries(r.moved).filter(([, n]) => n > 0);
  lines.push(
    `${r.dryRun ? 'would move' : 'moved'}: ${states.map(([s, n]) => `${s} ${n}`).join(', ') || 'nothing'}; schedulers ${r.schedulers}`,
  );
  if (r.alreadyThere > 0)
    lines.push(`found on both sides after an interrupted run: ${r.alreadyThere} (${target}'s copy kept, ${source}'s removed)`);
  if (r.left.held > 0) lines.push(`left: ${r.left.held} active, held by ${source} workers (stop them, or run again once they finish)`);
  if (r.left.waitingForParent > 0)
    lines.push(`left: ${r.left.waitingForParent} waiting for a parent still in BullMQ (migrate the parent's queue)`);
  if (r.left.history > 0) lines.push(`left: ${r.left.history} completed (history: add --with-history to move them)`);
  if (r.hopperOnly) {
    const dropped = Object.keys(r.hopperOnly.dropped).length > 0;
    const shown = dropped ? r.hopperOnly.dropped : r.hopperOnly.found;
    for (const [f, n] of Object.entries(shown)) {
      lines.push(`Hopper-only${dropped ? ', dropped' : ''}: ${n} × ${HOPPER_ONLY[f as HopperOnlyFeature]}`);
    }
    if (!dropped && Object.keys(shown).length > 0) lines.push('a run refuses this state unless --drop-hopper-only');
  }
  for (const f of r.refusals) lines.push(`cannot move ${f.state} ${f.id}: ${f.why}`);
  if (r.refusedCount > r.refusals.length) lines.push(`... and ${r.refusedCount - r.refusals.length} more refused`);
  for (const note of r.notes) lines.push(`note: ${note}`);
  const c = r.counts;
  const row = (t: Record<string, number>) =>
    Object.entries(t)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ');
  lines.push(`${source} before: ${row(c.sourceBefore)}`);
  if (!r.dryRun) {
    lines.push(`${source} after:  ${row(c.sourceAfter)}`);
    lines.push(`${target} after:  ${row(c.destinationAfter)}`);
    lines.push(
      `counts read back ${r.countsMatch ? 'match' : 'DO NOT match'} what the run accounts for; ${(r.durationMs / 1000).toFixed(1)} s`,
    );
  }
  return lines;
}

export const migrateCommand: Command = {
  words: ['migrate'],
  summary:
    'move a live BullMQ queue into Hopper (no job lost; resumable; --follow bridges producers still on BullMQ), or back with --to-bullmq',
  usage:
    'hopper migrate --from <redis-url> --queue <name> [--prefix bull] [--to <redis-url>] [--hopper-prefix hopper] [--dry-run] [--follow [--quiet-for <seconds>]] [--with-history] [--to-bullmq [--drop-hopper-only] [--bullmq-version 6.7.0]]',
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    queue: { type: 'string' },
    'hopper-prefix': { type: 'string' },
    'dry-run': { type: 'boolean' },
    follow: { type: 'boolean' },
    'quiet-for': { type: 'string' },
    'with-history': { type: 'boolean' },
    'to-bullmq': { type: 'boolean' },
    'drop-hopper-only': { type: 'boolean' },
    'bullmq-version': { type: 'string' },
  },
  async run(ctx, { positionals, values }) {
    if (positionals.length > 0) throw new UsageError(`migrate takes no positional arguments (got "${positionals[0]}"): use --queue`);
    const from = values.from;
    const queue = values.queue;
    if (typeof from !== 'string' || from === '') throw new UsageError('--from <redis-url> is required (the Redis BullMQ runs on)');
    if (typeof queue !== 'string' || queue === '') throw new UsageError('--queue <name> is required');
    if (values['quiet-for'] !== undefined && values.follow !== true) throw new UsageError('--quiet-for goes with --follow');
    if (values['drop-hopper-only'] === true && values['to-bullmq'] !== true)
      throw new UsageError('--drop-hopper-only goes with --to-bullmq');
    if (values['bullmq-version'] !== undefined && values['to-bullmq'] !== true)
      throw new UsageError('--bullmq-version goes with --to-bullmq');
    const back = values['to-bullmq'] === true;
    const bullmqVersion = values['bullmq-version'];
    if (bullmqVersion !== undefined && !(typeof bullmqVersion === 'string' && /^[56](\.\d+\.\d+)?$/.test(bullmqVersion)))
      throw new UsageError(`--bullmq-version must be 5 or 6, or a 5.x.y / 6.x.y version (got "${String(bullmqVersion)}")`);
    const quietFor = values['quiet-for'] === undefined ? undefined : intOption(values, 'quiet-for', 0, 1) * 1000;
    const controller = new AbortController();
    const onSignal = () => {
      ctx.io.stderr.write('hopper migrate: stopping after the batch in hand (run again to resume)\n');
      controller.abort();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let report: MigrationReport;
    try {
      report = await (back ? migrateToBullMQ : migrateFromBullMQ)({
        from,
        queue,
        prefix: typeof values.prefix === 'string' ? values.prefix : 'bull',
        to: typeof values.to === 'string' ? values.to : undefined,
        hopperPrefix: typeof values['hopper-prefix'] === 'string' ? values['hopper-prefix'] : 'hopper',
        dryRun: values['dry-run'] === true,
        follow: values.follow === true,
        quietForMs: quietFor,
        withHistory: values['with-history'] === true,
        ...(back ? { dropHopperOnly: values['drop-hopper-only'] === true, bullmqVersion } : {}),
        signal: controller.signal,
        onProgress: (event) => {
          const line = describe(event, back);
          if (line !== undefined && !ctx.options.json) ctx.io.stderr.write(`${line}\n`);
        },
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (ctx.options.json) ctx.io.stdout.write(`${JSON.stringify(report)}\n`);
    else for (const line of details(report)) ctx.io.stdout.write(`${line}\n`);
    ctx.io.stdout.write(`${summaryLine(report)}\n`);
    if (report.dryRun) return report.refusedCount > 0 ? EXIT_INCOMPLETE : 0;
    return isComplete(report) ? 0 : EXIT_INCOMPLETE;
  },
};
