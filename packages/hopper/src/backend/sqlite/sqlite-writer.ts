/**
 * The write side's base of the SQLite backend: one IMMEDIATE transaction per operation (the
 * counterpart of one Lua script; the outcomes it counted are written to the metrics counters
 * before it commits) and the fence checks every write shares. Subclasses: sqlite-lifecycle.ts (add, claim, ack, locks, stalls),
 * sqlite-management.ts (queue and job management), sqlite-backend.ts (the rest of the seam).
 */
import type { Fence } from '../backend.js';
import { WriteCode } from '../requests.js';
import { Tx, type JobRow } from './sqlite-ops.js';
import { SqliteQueueReads } from './sqlite-reads.js';
import { flushCounts } from './sqlite-metrics.js';

/** Emits between two checks of the events cap (the table is trimmed in batches, as XADD MAXLEN ~). */
const TRIM_EVERY = 64;

/** Options of a SQLite backend: the `sqlite:` URL, the prefix and the queue. */
export interface SqliteBackendOptions {
  url: string;
  prefix: string;
  queueName: string;
  /** Receives the loss of the database file (deleted or replaced under this process). */
  onConnectionError?: (err: Error) => void;
}

/** The write transaction and the fence checks of the SQLite backend's writes. */
export abstract class SqliteQueueWriter extends SqliteQueueReads {
  constructor(options: SqliteBackendOptions) {
    super(options);
  }

  /** Runs `fn` in one write transaction of this queue, then announces what it did (wake-ups, events). */
  protected async write<T>(now: number | undefined, fn: (tx: Tx) => T): Promise<T> {
    const s = await this.store();
    const qid = this.queueId(s);
    let tx!: Tx;
    const result = s.write(() => {
      tx = new Tx(s, qid, now ?? Date.now());
      const value = fn(tx);
      flushCounts(s, tx.counts);
      if (tx.emitted > 0) {
        this.sinceTrim += tx.emitted;
        if (this.sinceTrim >= TRIM_EVERY) {
          this.sinceTrim = 0;
          tx.trimEvents();
        }
      }
      return value;
    });
    for (const wake of tx.announce) s.hub.emit(wake);
    return result;
  }

  private sinceTrim = 0;

  protected epochOf(tx: Tx): string {
    return (tx.s.stmt('SELECT epoch FROM queues WHERE qid = ?').get(tx.qid) as { epoch: string | null }).epoch ?? '';
  }

  /** Checks a fenced holder's job: the code of the fence check (Done when it holds the job). */
  protected fenceCode(row: JobRow | undefined, fence: Fence): WriteCode {
    if (!row) return WriteCode.Missing;
    if (row.state !== 'active') return WriteCode.NotActive;
    if (row.token !== fence.token || row.attempts_started !== fence.attempt) return WriteCode.StaleAttempt;
    return WriteCode.Done;
  }

  /**
   * An unfenced call (no fence, or an empty token: a job fetched with getJob) needs only the job;
   * a fenced one needs its attempt to hold it, or to have moved it out of active itself and not
   * been claimed again since (BullMQ's step-job pattern; checkFence in includes/fence.lua).
   */
  protected looseFence(row: JobRow | undefined, fence: Fence | undefined): WriteCode {
    if (!row) return WriteCode.Missing;
    if (!fence || fence.token === '') return WriteCode.Done;
    if (row.attempts_started !== fence.attempt) return WriteCode.StaleAttempt;
    if (row.token === fence.token || (!row.token && row.moved_token === fence.token)) return WriteCode.Done;
    return WriteCode.StaleAttempt;
  }
}
