/**
 * Dead letters on SQLite (the counterpart of includes/deadletter.lua and replayDeadLetters.lua):
 * a job that fails for good (attempts exhausted, UnrecoverableError, too many stalls) whose
 * options name a dead-letter queue gets, in the same transaction, a waiting job there with id
 * `<origin queue>:<origin id>:<attempts started>`, carrying its name, data, failed reason, attempts
 * made, stack traces, recorded steps, and its origin (the `origin` column, JSON: queue, id,
 * options, timestamps, parent link). A cancelled job is never dead-lettered. A replay puts the
 * original job back into its origin queue under its id, with fresh attempts.
 */
import { groupOfOpts } from './sqlite-groups.js';
import type { Tx, JobRow } from './sqlite-ops.js';
import type { ReplayDeadLetterResult } from '../backend.js';

/** What a dead letter keeps of its origin job (the `origin` column). */
interface Origin {
  queue: string;
  jobId: string;
  opts: string;
  ts: number;
  processedOn: number | null;
  failedOn: number;
  parentQid: number | null;
  parentId: string | null;
}

/** The dead-letter queue named in a job's options, or undefined. */
function deadLetterQueueOf(opts: string): string | undefined {
  if (opts === '' || !opts.includes('"deadLetter"')) return undefined;
  try {
    const decoded = JSON.parse(opts) as { deadLetter?: { queue?: unknown } };
    const queue = decoded.deadLetter?.queue;
    return typeof queue === 'string' && queue !== '' ? queue : undefined;
  } catch {
    return undefined;
  }
}

/** Copies a job's recorded steps to another job (a replay does not repeat their effects). */
function copySteps(from: Tx, fromId: string, to: Tx, toId: string): void {
  from.s
    .stmt('INSERT OR REPLACE INTO steps (qid, job_id, key, record) SELECT ?, ?, key, record FROM steps WHERE qid = ? AND job_id = ?')
    .run(to.qid, toId, from.qid, fromId);
}

/**
 * Adds the dead letter of `row` (failing for good now, before its retention may delete it) when
 * its options name a queue. `made`: its attempts made; `reason`: its failed reason.
 */
export function deadLetter(tx: Tx, row: JobRow, made: number, reason: string): boolean {
  if (row.cancel_reason !== null) return false;
  const dlq = deadLetterQueueOf(row.opts);
  if (!dlq) return false;
  const { name } = tx.queue();
  const dtx = tx.on(tx.queueIdOf(dlq));
  const dlId = `${name}:${row.id}:${row.attempts_started}`;
  if (dtx.exists(dlId)) return false;
  // The stack traces as they are now (this attempt's may have been added since `row` was read).
  const stacktrace = tx.job(row.id)?.stacktrace ?? row.stacktrace;
  const origin: Origin = {
    queue: name,
    jobId: row.id,
    opts: row.opts,
    ts: row.ts,
    processedOn: row.processed_on,
    failedOn: tx.now,
    parentQid: row.parent_qid,
    parentId: row.parent_id,
  };
  dtx.s
    .stmt(
      `INSERT INTO jobs (qid, id, name, data, opts, state, ts, failed_reason, attempts_made, stacktrace, origin)
       VALUES (?, ?, ?, ?, '', 'waiting', ?, ?, ?, ?, ?)`,
    )
    .run(dtx.qid, dlId, row.name, row.data, tx.now, reason, made, stacktrace, JSON.stringify(origin));
  copySteps(tx, row.id, dtx, dlId);
  dtx.pushReady(dlId, 0, false);
  dtx.signalWork();
  dtx.emit('added', { ids: JSON.stringify([dlId]), names: JSON.stringify([row.name]) });
  tx.emit('dead-lettered', { jobId: row.id, deadLetterQueue: dlq, deadLetterId: dlId });
  return true;
}

/**
 * Replays dead letter `id` of this (dead-letter) queue (as replayDeadLetters.lua): replayed,
 * missing, originExists (refused: the origin job exists and is not failed), busy (the dead letter
 * is active, delayed or prioritized), notDeadLetter.
 */
export function replayDeadLetter(tx: Tx, id: string): ReplayDeadLetterResult {
  const row = tx.job(id);
  if (!row) return { kind: 'missing' };
  if (row.origin === null) return { kind: 'notDeadLetter' };
  if (row.state !== 'waiting' && row.state !== 'completed' && row.state !== 'failed') return { kind: 'busy' };
  const origin = JSON.parse(row.origin) as Origin;
  const otx = tx.on(tx.queueIdOf(origin.queue));
  const existing = otx.job(origin.jobId);
  if (existing && existing.state !== 'failed') return { kind: 'originExists' };
  if (existing) otx.deleteJob(origin.jobId);
  otx.s
    .stmt(
      `INSERT INTO jobs (qid, id, name, data, opts, state, ts, parent_qid, parent_id, grp)
       VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?)`,
    )
    .run(
      otx.qid,
      origin.jobId,
      row.name,
      row.data,
      origin.opts,
      origin.ts,
      origin.parentQid,
      origin.parentId,
      groupOfOpts(origin.opts)?.id ?? null,
    );
  copySteps(tx, id, otx, origin.jobId);
  otx.pushReady(origin.jobId, 0, false);
  otx.signalWork();
  otx.emit('added', { ids: JSON.stringify([origin.jobId]), names: JSON.stringify([row.name]) });
  tx.deleteJob(id);
  tx.emit('replayed', { jobId: id, originQueue: origin.queue, originId: origin.jobId });
  return { kind: 'replayed' };
}

/** A dead letter's origin as the JobRecord carries it. */
export function originOf(row: JobRow): { queue: string; jobId: string } | undefined {
  if (row.origin === null || row.origin === undefined) return undefined;
  const origin = JSON.parse(row.origin) as Origin;
  return { queue: origin.queue, jobId: origin.jobId };
}
