/**
 * Job output streams on SQLite (`job.stream`, `queue.readStream`): the counterpart of
 * redis-output.ts and appendOutput.lua. A job's stream is its rows of `outputs`, ordered by
 * (`ms`, `seq`): the entry id `<ms>-<seq>`, as a Redis Stream id, increasing within a job's stream
 * (`ms` never goes back, `seq` counts entries within one ms). Each entry carries the attempt that
 * wrote it; the rows are capped per job (about `maxLen`) and deleted with the job (Tx.deleteJob).
 *
 * Following live writes: a wait (waitOutput) checks the streams it follows at once, then on every
 * write of this process (the hub's `output:<qid>`, sent after commit) and, for writes of other
 * processes sharing a file database, on the wake file's notification and the adaptive poll of the
 * backend's waits (database.ts), each of which reads one integer (the table's newest rowid) per tick and the streams only when
 * it moved (or every FULL_CHECK_MS). Every reader of a process shares that one wait per lane, as
 * on Redis; a SQLite wait holds no connection.
 */
import { OUTPUT_WAIT_MAX, type Fence, type OutputEntry, type OutputWait } from '../backend.js';
import { WriteCode } from '../requests.js';
import type { SqliteStore } from './database.js';
import type { Tx } from './sqlite-ops.js';
import { SqliteQueueManagement } from './sqlite-management.js';

/** Most chunks one append takes (appendOutput.lua's limit; job.stream splits larger writes). */
const CHUNKS_PER_CALL = 200;
/** How often a wait reads its streams even when the newest rowid did not move (a deleted row's rowid reused). */
const FULL_CHECK_MS = 250;

interface OutputRow {
  ms: number;
  seq: number;
  attempt: number;
  kind: string;
  value: string;
}

function toEntry(row: OutputRow): OutputEntry {
  const kind = row.kind === 's' ? 'text' : row.kind === 'j' ? 'json' : 'end';
  return { id: `${row.ms}-${row.seq}`, attempt: row.attempt, kind, value: kind === 'end' ? '' : row.value };
}

/** An entry id as (ms, seq); '0-0' (or anything unparsable) reads from the start. */
function position(id: string): [number, number] {
  const [ms, seq] = id.split('-').map(Number);
  return [Number.isFinite(ms) ? ms : 0, Number.isFinite(seq) ? seq : 0];
}

/** Entries of job `id` after entry `after`, at most `count`. */
function readAfter(s: SqliteStore, qid: number, id: string, after: string, count: number): OutputEntry[] {
  const [ms, seq] = position(after);
  const rows = s
    .stmt(
      `SELECT ms, seq, attempt, kind, value FROM outputs WHERE qid = ? AND job_id = ? AND (ms > ? OR (ms = ? AND seq > ?))
       ORDER BY ms, seq LIMIT ?`,
    )
    .all(qid, id, ms, ms, seq, count) as OutputRow[];
  return rows.map(toEntry);
}

/** The wake counters of waitOutput, per store and queue (a reader joining a blocked lane bumps its queue's). */
const wakes = new WeakMap<SqliteStore, Map<number, number>>();

function wakeCount(s: SqliteStore, qid: number): number {
  return wakes.get(s)?.get(qid) ?? 0;
}

/** Appends entries to a job's stream (inside the caller's transaction, after its fence check); see appendOutput.lua. */
function append(tx: Tx, id: string, entries: { kind: string; value: string }[], attempt: number, maxLen: number): void {
  const last = tx.s.stmt('SELECT ms, seq FROM outputs WHERE qid = ? AND job_id = ? ORDER BY ms DESC, seq DESC LIMIT 1').get(tx.qid, id) as
    { ms: number; seq: number } | undefined;
  const ms = Math.max(tx.now, last?.ms ?? 0);
  let seq = last && last.ms === ms ? last.seq + 1 : 0;
  const insert = tx.s.stmt('INSERT INTO outputs (qid, job_id, ms, seq, attempt, kind, value) VALUES (?, ?, ?, ?, ?, ?, ?)');
  for (const entry of entries) {
    insert.run(tx.qid, id, ms, seq, attempt, entry.kind, entry.value);
    seq++;
  }
  // Capped as XADD MAXLEN ~: trimmed once it holds a tenth more than the cap (bounded work per call).
  const { n } = tx.s.stmt('SELECT COUNT(*) AS n FROM outputs WHERE qid = ? AND job_id = ?').get(tx.qid, id) as { n: number };
  if (n > maxLen + Math.ceil(maxLen / 10)) {
    tx.s
      .stmt(
        `DELETE FROM outputs WHERE rowid IN
           (SELECT rowid FROM outputs WHERE qid = ? AND job_id = ? ORDER BY ms, seq LIMIT ?)`,
      )
      .run(tx.qid, id, n - maxLen);
  }
  tx.announce.add(`output:${tx.qid}`);
}

/** Job output streams on SQLite (the seam's appendOutput, readOutput, lastOutput, waitOutput, wakeOutputWaits). */
export abstract class SqliteQueueOutput extends SqliteQueueManagement {
  /**
   * Appends chunks (then the end entry when `ended`) to the job's stream, fenced to the attempt;
   * a call re-sent with a `seq` already applied for the attempt appends nothing. Codes as
   * appendOutput.lua: 1 done, -1 missing, -2 stale attempt, -6 too many chunks.
   */
  async appendOutput(
    id: string,
    chunks: { json: boolean; value: string }[],
    ended: boolean,
    fence: Fence,
    seq: number,
    maxLen: number,
  ): Promise<WriteCode> {
    if (chunks.length > CHUNKS_PER_CALL)
      throw new RangeError(`appendOutput takes at most ${CHUNKS_PER_CALL} chunks per call, got ${chunks.length}.`);
    return this.write(undefined, (tx) => {
      const row = tx.job(id);
      const code = this.looseFence(row, fence);
      if (code !== WriteCode.Done || !row) return code;
      const stored = (row as { output_seq?: string | null }).output_seq;
      if (stored) {
        const [a, s] = stored.split(':').map(Number);
        if (a === fence.attempt && s >= seq) return WriteCode.Done;
      }
      const entries = chunks.map((c) => ({ kind: c.json ? 'j' : 's', value: c.value }));
      if (ended) entries.push({ kind: 'e', value: '1' });
      append(tx, id, entries, fence.attempt, maxLen);
      tx.set(id, { output_seq: `${fence.attempt}:${seq}` });
      return WriteCode.Done;
    });
  }

  async readOutput(id: string, after: string, count: number): Promise<OutputEntry[]> {
    const s = await this.store();
    return readAfter(s, this.queueId(s), id, after, count);
  }

  async runOf(id: string): Promise<string | undefined> {
    const s = await this.store();
    const row = s.stmt('SELECT run_id FROM jobs WHERE qid = ? AND id = ?').get(this.queueId(s), id) as
      { run_id: string | null } | undefined;
    return row?.run_id ?? undefined;
  }

  async lastOutput(id: string): Promise<OutputEntry | undefined> {
    const s = await this.store();
    const row = s
      .stmt('SELECT ms, seq, attempt, kind, value FROM outputs WHERE qid = ? AND job_id = ? ORDER BY ms DESC, seq DESC LIMIT 1')
      .get(this.queueId(s), id) as OutputRow | undefined;
    return row && toEntry(row);
  }

  /**
   * Waits up to `blockMs` for entries after each `(id, after)` of `reads`; returns early when
   * woken by wakeOutputWaits (`wakeAfter`: the wake count seen, '' from now). `lane` needs no
   * connection of its own here.
   */
  async waitOutput(
    _lane: number,
    reads: { id: string; after: string }[],
    wakeAfter: string,
    blockMs: number,
    count: number,
  ): Promise<OutputWait> {
    if (reads.length > OUTPUT_WAIT_MAX) throw new RangeError(`waitOutput takes at most ${OUTPUT_WAIT_MAX} streams, got ${reads.length}.`);
    const s = await this.store();
    const qid = this.queueId(s);
    const since = wakeAfter === '' ? wakeCount(s, qid) : Number(wakeAfter);
    const entries = new Map<string, OutputEntry[]>();
    const newest = (): number => (s.stmt('SELECT MAX(rowid) AS r FROM outputs').get() as { r: number | null }).r ?? 0;
    let seen = -1;
    let checkedAt = 0;
    const check = (): boolean => {
      if (wakeCount(s, qid) > since) return true;
      const top = newest();
      const now = Date.now();
      if (top === seen && now - checkedAt < FULL_CHECK_MS) return false;
      seen = top;
      checkedAt = now;
      for (const read of reads) {
        const found = readAfter(s, qid, read.id, read.after, count);
        if (found.length > 0) entries.set(read.id, found);
      }
      return entries.size > 0;
    };
    await this.waitFor(s, `output:${qid}`, check, blockMs === 0 ? -1 : Math.max(blockMs, 0));
    return { entries, wake: String(wakeCount(s, qid)) };
  }

  /** Wakes this process's blocked output waits of the queue (a reader joined a lane). */
  async wakeOutputWaits(): Promise<void> {
    const s = await this.store();
    const qid = this.queueId(s);
    let counts = wakes.get(s);
    if (!counts) wakes.set(s, (counts = new Map<number, number>()));
    counts.set(qid, (counts.get(qid) ?? 0) + 1);
    s.hub.emit(`output:${qid}`);
  }
}
