/**
 * Cancel notifications across processes on SQLite (the counterpart of the Redis cancel channel).
 * A job cancelled while active bumps its queue's `cancel_signal` counter in the cancel's own
 * transaction, and the cancelling process tells its own workers at once (the hub's
 * `cancel:<qid>`). A worker in another process sharing the file database checks the counter on
 * every write of another process (the wake file's notification, database.ts) and by the adaptive
 * poll its idle waits use (every 1 ms after a change, doubling to the store's pollMaxMs: 100 ms
 * with the notification, 10 ms without), then reads which active jobs of the queue are marked cancelled and
 * hands their ids to its listener (a worker ignores the ids it does not run, and a job it aborted
 * already). A `sqlite::memory:` database has no other process: it is not polled.
 */
import type { SqliteStore } from './database.js';
import { OTHER_WRITE } from './sqlite-wake.js';
import type { Tx } from './sqlite-ops.js';

/** The poll of the cancel signal: the first check 1 ms after a change, doubling up to the store's pollMaxMs. */
const POLL_FIRST_MS = 1;
/** Most marked jobs one change reports (a worker runs at most this many jobs of a queue in practice). */
const REPORT_MAX = 1000;

/** Bumps the queue's cancel signal: workers of other processes look for marked active jobs (in the cancel's transaction). */
export function signalCancel(tx: Tx): void {
  tx.s.stmt('UPDATE queues SET cancel_signal = cancel_signal + 1 WHERE qid = ?').run(tx.qid);
}

function readSignal(s: SqliteStore, qid: number): number {
  return (s.stmt('SELECT cancel_signal FROM queues WHERE qid = ?').get(qid) as { cancel_signal: number } | undefined)?.cancel_signal ?? 0;
}

/**
 * Watches queue `qid`'s cancel signal for writes of other processes; calls `listener` with each
 * active job marked cancelled when it changes. Returns the function that stops watching.
 */
export function watchCancels(s: SqliteStore, qid: number, listener: (jobId: string) => void): () => void {
  if (s.memory) return () => undefined;
  let seen = readSignal(s, qid);
  let delay = s.pollMaxMs;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    let ids: string[] = [];
    try {
      const signal = readSignal(s, qid);
      if (signal !== seen) {
        seen = signal;
        delay = POLL_FIRST_MS;
        ids = (
          s.stmt("SELECT id FROM jobs WHERE qid = ? AND state = 'active' AND cancel_reason IS NOT NULL LIMIT ?").all(qid, REPORT_MAX) as {
            id: string;
          }[]
        ).map((r) => r.id);
      } else {
        delay = Math.min(delay * 2, s.pollMaxMs);
      }
    } catch {
      // The database was closed under the watch: it ends.
      stop();
      return;
    }
    for (const id of ids) listener(id);
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
    // The watch never keeps the process alive on its own.
    timer.unref();
  };
  // A write of another process (the wake file): check now rather than at the next poll.
  const onOtherWrite = (): void => tick();
  s.hub.on(OTHER_WRITE, onOtherWrite);
  timer = setTimeout(tick, delay);
  timer.unref();
  const stop = (): void => {
    stopped = true;
    clearTimeout(timer);
    s.hub.off(OTHER_WRITE, onOtherWrite);
  };
  return stop;
}
