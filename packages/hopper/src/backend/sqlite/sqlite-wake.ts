/**
 * Cross-process wake-ups of a file database: every committed write rewrites one byte of
 * `<database>-wake` (once per event-loop turn), and every process watches that file (fs.watch:
 * inotify on Linux), so a worker, a QueueEvents reader or a cancel watch in another process checks
 * its condition when the notification arrives instead of at its next poll. The poll stays as the
 * fallback (POLL_MAX_WATCHED_MS); if the file cannot be opened or watched, the waits poll as
 * before (POLL_MAX_MS). docs/backends.md measures it.
 */
import type { EventEmitter } from 'node:events';
import { closeSync, constants, openSync, watch, writeSync, type FSWatcher } from 'node:fs';

/**
 * The hub's event for a write of another process (or of another connection of this one) to the
 * file database: the wake file changed. Every wait checks its condition on it.
 */
export const OTHER_WRITE = 'other-write';

/**
 * The ceiling of a wait's adaptive poll (ms): 10 when writes of other processes are not notified
 * (no wake file watch: a `sqlite::memory:` database, or a watch that failed), 100 when they are
 * (the poll is then only a fallback, for a process that does not touch the wake file).
 */
export const POLL_MAX_MS = 10;
export const POLL_MAX_WATCHED_MS = 100;

/** The byte every write rewrites in the wake file. */
const WAKE_BYTE = Buffer.from([1]);

/** One database's wake file in this process: the watch that tells `hub`, and the touch after writes. */
export class WakeFile {
  /** The ceiling of the waits' adaptive poll (ms): see POLL_MAX_MS. */
  pollMaxMs = POLL_MAX_MS;
  private fd: number | undefined;
  private watcher: FSWatcher | undefined;
  private touchPending = false;

  constructor(private readonly hub: EventEmitter) {}

  /** Opens (creating it) and watches `<dbPath>-wake`; on failure the waits keep polling. */
  watch(dbPath: string): void {
    const file = `${dbPath}-wake`;
    try {
      this.fd = openSync(file, constants.O_RDWR | constants.O_CREAT);
      this.watcher = watch(file, { persistent: false }, (type) => {
        this.hub.emit(OTHER_WRITE);
        // Renamed or deleted: this watch sees no further writes.
        if (type === 'rename') this.unwatch();
      });
      this.watcher.on('error', () => this.unwatch());
      this.pollMaxMs = POLL_MAX_WATCHED_MS;
    } catch {
      this.unwatch();
    }
  }

  /** Stops the watch and closes the file (the database is closing). */
  close(): void {
    this.unwatch();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Rewrites the file's byte after this turn's writes: one notification for all of them. */
  touch(): void {
    if (this.touchPending || this.fd === undefined) return;
    this.touchPending = true;
    setImmediate(() => {
      this.touchPending = false;
      if (this.fd === undefined) return;
      try {
        writeSync(this.fd, WAKE_BYTE, 0, 1, 0);
      } catch {
        // The file went away: the other processes' polls still see the write.
      }
    });
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.pollMaxMs = POLL_MAX_MS;
  }
}
