/**
 * The backend seam's error boundary: every operation of a backend (and of a backend admin) goes
 * through it, and an error that is not already one of Hopper's typed errors is mapped here, once,
 * for both backends: Redis's refusal of a write for want of memory becomes a RedisFullError, any
 * other Redis error reply (ReplyError), a SQLite error (SqliteError) or an internal TypeError
 * becomes a BackendError naming the operation, the queue and what to do. Connection errors
 * (refused, closed, timed out) pass through unchanged: they are the caller's to retry.
 */
import { asRedisFullError, BackendError, hopperErrorCode, ScriptError } from '../job/errors.js';

/** Redis error replies that mean "try again later", with what to do. */
const REDIS_HINTS: [RegExp, string][] = [
  [/^BUSY/, 'Redis is busy running a long script: retry once it ends (or SCRIPT KILL it).'],
  [/^LOADING/, 'Redis is loading its dataset: retry in a moment.'],
  [/^(READONLY|MASTERDOWN)/, 'this connection reaches a read-only replica: connect to the primary.'],
  [/^(TRYAGAIN|CLUSTERDOWN)/, 'the Redis Cluster is resharding or down: retry in a moment.'],
  [
    /^(NOPERM|NOAUTH|WRONGPASS)/,
    "the connection's user may not run this command: check the credentials and the ACL (Hopper needs FCALL or EVALSHA, and the queue's keys).",
  ],
  [/^MISCONF/, 'Redis cannot persist its data (MISCONF): check its disk and RDB/AOF settings.'],
];

/** SQLite result codes, with what to do. */
const SQLITE_HINTS: [RegExp, string][] = [
  [/^SQLITE_BUSY/, 'another process held the database write lock too long: retry.'],
  [/^SQLITE_READONLY/, 'the database file (or its directory) is read-only for this process: check its permissions.'],
  [/^SQLITE_FULL/, 'the disk is full: free space.'],
  [/^SQLITE_(CORRUPT|NOTADB)/, 'the database file is damaged or is not a SQLite database: restore it from a backup.'],
  [/^SQLITE_CANTOPEN/, 'the database file cannot be opened: check that its directory exists and is writable.'],
  [/^SQLITE_IOERR/, 'the disk failed to read or write the database: check the disk.'],
];

const INTERNAL = 'This is unexpected: please report it to Hopper with this message.';

function hintFor(hints: [RegExp, string][], text: string): string {
  for (const [pattern, hint] of hints) if (pattern.test(text)) return hint;
  return INTERNAL;
}

function backendError(message: string, operation: string, backend: 'redis' | 'sqlite', cause: unknown): BackendError {
  const err = new BackendError(message, { cause });
  err.operation = operation;
  err.backend = backend;
  return err;
}

/**
 * The typed form of `err`, thrown by backend operation `operation` of queue `queue` (`''`: a
 * prefix-wide admin read): Hopper's own errors and connection errors as they are, the rest mapped.
 */
export function toTypedError(err: unknown, operation: string, backend: 'redis' | 'sqlite', queue: string): unknown {
  const where = queue === '' ? operation : `${operation} on queue "${queue}"`;
  if (hopperErrorCode(err) !== undefined) {
    // A script that Redis refused to run for want of memory wrote nothing: RedisFullError says so.
    return err instanceof ScriptError ? asRedisFullError(err, where) : err;
  }
  if (!(err instanceof Error)) {
    return backendError(`${where} failed with a non-Error value (${String(err)}). ${INTERNAL}`, operation, backend, err);
  }
  const name = err.name;
  const code = (err as { code?: unknown }).code;
  if (name === 'ReplyError') {
    const full = asRedisFullError(err, where);
    if (full !== err) return full;
    return backendError(`Redis refused ${where}: ${err.message}. ${hintFor(REDIS_HINTS, err.message)}`, operation, backend, err);
  }
  if (name === 'SqliteError' || (typeof code === 'string' && code.startsWith('SQLITE_'))) {
    const text = typeof code === 'string' ? code : err.message;
    return backendError(
      `SQLite failed ${where}: ${err.message} (${String(code)}). ${hintFor(SQLITE_HINTS, text)}`,
      operation,
      backend,
      err,
    );
  }
  if (err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError) {
    return backendError(
      `${where} failed inside Hopper's ${backend} backend: ${err.name}: ${err.message}. ${INTERNAL}`,
      operation,
      backend,
      err,
    );
  }
  return err;
}

/** The methods of `target`'s class chain (not Object's). */
function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(target) as object | null;
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor && typeof descriptor.value === 'function') names.add(name);
    }
  }
  return [...names];
}

/**
 * A view of `backend` whose every method goes through {@link toTypedError}: a rejection or a throw
 * that is not typed is mapped, naming the method as the operation. The view inherits from the
 * backend (its fields read through), and each method runs on the backend itself, so the backend's
 * calls to its own methods see their raw errors (a retry on SQLITE_BUSY still recognises it); only
 * callers across the seam see the mapped ones. Each method is wrapped once (no Proxy trap per
 * call): the success path costs one call and, for a promise, one `then`.
 */
export function guardBackend<T extends object>(backend: T, kind: 'redis' | 'sqlite', queue: string): T {
  const raw = backend as Record<string, unknown>;
  const view = Object.create(backend) as Record<string, unknown>;
  for (const name of methodNames(backend)) {
    const original = raw[name] as (...args: unknown[]) => unknown;
    const map = (err: unknown): never => {
      throw toTypedError(err, name, kind, queue);
    };
    view[name] = function guarded(...args: unknown[]): unknown {
      let result: unknown;
      try {
        result = original.apply(backend, args);
      } catch (err) {
        return map(err);
      }
      return result instanceof Promise ? result.then(undefined, map) : result;
    };
  }
  return view as T;
}
