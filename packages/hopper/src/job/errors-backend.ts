/**
 * Hopper's typed errors about the connection and the storage (re-exported by job/errors.ts): a
 * component closed or past its close deadline, a backend that cannot be reached or answered an
 * error, a Redis that is full, too old or reset, a backend that lacks an operation or its driver,
 * and a migration that refused or stopped.
 */
import { branded, ErrorCode } from './errors-base.js';

/** The queue, worker or connection was closed. */
export class ClosedError extends branded(ErrorCode.Closed) {}

/**
 * `worker.close()` reached its deadline (`closeTimeout`): a processor did not settle in time, or
 * Redis did not answer. The jobs still running were released for another worker at once and
 * their processors aborted; `jobIds` names them.
 */
export class CloseTimeoutError extends branded(ErrorCode.CloseTimeout) {
  /** The jobs released for another worker when the deadline passed. */
  readonly jobIds: string[];

  constructor(message: string, jobIds: string[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.jobIds = jobIds;
  }
}

/**
 * The backend cannot be reached or refuses to serve now: the connection was refused or reset, the
 * host is unknown, Redis answered BUSY (a script ran past busy-reply-threshold) or LOADING, or a
 * SQLite database cannot be opened (its directory is missing) or stays locked by another process.
 * The message says what was wrong and what to check; `cause` is the underlying error. Nothing of
 * the call was sent. Hopper keeps trying in the background: a component whose start failed
 * starts by itself once the backend answers (a Worker then processes jobs), and a later call
 * tries again. See docs/limits-and-errors.md, Time bounds.
 */
export class ConnectionError extends branded(ErrorCode.Connection) {}

/**
 * The backend did not answer within a stated bound (docs/limits-and-errors.md, Time bounds): a
 * connection stayed without a working link for `connectTimeout` (default 10 s; a server that
 * accepts the connection but never answers, a firewall that drops packets), or a component did not
 * start in time. The message names the bound and what to check. A call that failed this way was
 * not sent, unless the message says its outcome is unknown.
 */
export class ConnectionTimeoutError extends branded(ErrorCode.ConnectionTimeout) {}

/**
 * A Redis Functions library with Hopper's library name is loaded on the server but does not hold
 * Hopper's functions (another program, or a hand-edited copy, loaded it under that name). Every
 * operation needs them: delete that library (`FUNCTION DELETE <name>`, named in the message) and
 * Hopper loads its own at the next call; components recover by themselves.
 */
export class LibraryConflictError extends branded(ErrorCode.LibraryConflict) {}

/**
 * The SQLite database file this process has open was deleted or replaced (its path now names
 * another file, or none): writes would go to an unlinked file that no other process sees. The
 * backend stops using it; every call rejects with this error. Restore the file, or restart the
 * processes on the new one.
 */
export class DatabaseLostError extends branded(ErrorCode.DatabaseLost) {}

/** The Redis server is too old or lacks something Hopper needs. */
export class UnsupportedRedisError extends branded(ErrorCode.UnsupportedRedis) {}

/** Keys that must change atomically would live in different Redis Cluster slots. */
export class CrossSlotError extends branded(ErrorCode.CrossSlot) {}

/**
 * A Lua script failed inside Redis (its message names the script and Redis's error; `cause` is the
 * original reply error). A worker whose acknowledgement batch fails this way retries the batch job
 * by job and reports each job that still fails with this error (`jobId` set), then goes on.
 */
export class ScriptError extends branded(ErrorCode.Script) {
  /** The job a worker's isolated acknowledgement failed for, when known. */
  jobId?: string;
}

/**
 * Redis refused an add because it is full: `used_memory` is over `maxmemory` and the policy is
 * `noeviction` (the one Hopper asks for), so Redis answered `OOM command not allowed`. Nothing
 * of the call was written (adds are atomic), and it is safe to retry. Jobs already in the queue
 * are not affected: workers keep renewing their locks and recording results while Redis is full,
 * and each finished job they remove frees room. Raised by `Queue.add`, `Queue.addBulk`,
 * `FlowProducer.add` and `FlowProducer.addBulk`; `cause` is Redis's reply.
 *
 * What to do: retry later with a backoff (workers draining the queue free memory), raise
 * `maxmemory`, or make room (keep fewer finished jobs: `removeOnComplete`/`removeOnFail`,
 * `queue.clean`, or `queue.drain`/`obliterate` on a queue you can empty).
 *
 * @example
 * try {
 *   await queue.add('mail', data);
 * } catch (err) {
 *   if (err instanceof RedisFullError) await retryLater(data);
 *   else throw err;
 * }
 */
export class RedisFullError extends branded(ErrorCode.RedisFull) {}

/** Redis's refusal of a write under `maxmemory` with `noeviction`. */
const OOM_REPLY = /OOM command not allowed/;

/**
 * For the add paths: Redis's OOM refusal (raw, or wrapped in a ScriptError) becomes a
 * {@link RedisFullError} naming `what` was refused; any other error is returned unchanged.
 */
export function asRedisFullError(err: unknown, what: string): unknown {
  const message = err instanceof Error ? err.message : '';
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
  if (!OOM_REPLY.test(message) && !OOM_REPLY.test(cause)) return err;
  return new RedisFullError(
    `Redis is full (used memory over maxmemory, policy noeviction) and refused ${what}: nothing was written. ` +
      'Retry later (workers free memory as they finish jobs), raise maxmemory, or make room ' +
      '(removeOnComplete/removeOnFail, queue.clean, or drain a queue you can empty).',
    { cause: err instanceof Error && err.cause instanceof Error && OOM_REPLY.test(cause) ? err.cause : err },
  );
}

/** The Redis dataset was reset (flushed or restarted without persistence) under a running app. */
export class DatasetResetError extends branded(ErrorCode.DatasetReset) {}

/**
 * The backend in use does not implement this operation yet (the SQLite backend is being built
 * operation by operation: see docs/backends.md for what it supports today). `operation` names it.
 */
export class BackendUnsupportedError extends branded(ErrorCode.BackendUnsupported) {
  /** The backend operation or feature refused. */
  readonly operation: string;

  constructor(operation: string, message?: string) {
    super(
      message ??
        `The SQLite backend does not support ${operation} yet. Use a Redis connection for it, or see docs/backends.md for what the SQLite backend supports today.`,
    );
    this.operation = operation;
  }
}

/** The driver a backend needs is not installed (the SQLite backend needs `better-sqlite3`). The message says what to install. */
export class BackendDriverMissingError extends branded(ErrorCode.BackendDriverMissing) {}

/** Why `hopper migrate` refused to start or stopped (docs/migrating.md). */
export type MigrationRefusal =
  /** The source queue's Redis layout is not one Hopper can read (BullMQ 5.x or 6.x). */
  | 'unknown-layout'
  /** The source queue does not exist (no meta, no jobs). */
  | 'no-queue'
  /** Another `hopper migrate` holds the queue's migration lock. */
  | 'locked'
  /** The way back would lose Hopper-only state (groups, steps, dead letters, budgets...). */
  | 'hopper-only-state'
  /** The target cannot receive migrated jobs (a SQLite connection, or BullMQ not installed for the way back). */
  | 'unsupported-target'
  /** The migration lock was lost (another process took it after it expired): the run stopped. */
  | 'lock-lost';

/**
 * `hopper migrate` (and its API, `hopper-queue/migrate`) refused to start or had to stop. `reason`
 * says which; the message says what was found and how to go on. Nothing is lost when it is
 * thrown: every job is on one side or the other, and a re-run resumes.
 */
export class MigrationError extends branded(ErrorCode.Migration) {
  /** Why the migration refused or stopped. */
  readonly reason: MigrationRefusal;

  constructor(reason: MigrationRefusal, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/**
 * The storage refused or failed an operation for a reason that is not the caller's input: Redis
 * answered an error (busy running a script, loading its data, a read-only replica, an ACL
 * refusal), SQLite failed (the file is locked by another process, read-only, full, or damaged),
 * or an internal error occurred. The message names the operation, the queue, the storage's own
 * message and what to do; `operation` and `backend` say the same as fields, and `cause` is the
 * original error. Raised at the backend seam, so no raw ReplyError, SqliteError or TypeError
 * reaches a caller.
 */
export class BackendError extends branded(ErrorCode.Backend) {
  /** The backend operation that failed (`addJobs`, `pause`, `upsertScheduler`...). */
  operation = '';
  /** Which storage: `redis` or `sqlite`. */
  backend: 'redis' | 'sqlite' = 'redis';
}
