/**
 * The one bridge from core code to a storage backend: core code creates backends here and
 * never imports a backend's internals (a lint rule keeps it so).
 */
import type { BackendAdmin, QueueBackend } from './backend.js';
import { guardBackend, toTypedError } from './guard.js';
import { RedisAdmin } from './redis/redis-admin.js';
import { RedisQueueBackend } from './redis/redis-backend.js';
import type { QueueConnection } from './redis/connection.js';
import { isSqliteUrl, sqlitePath } from './sqlite/database.js';
import { SqliteAdmin } from './sqlite/sqlite-admin.js';
import { SqliteQueueBackend } from './sqlite/sqlite-backend.js';

export type { ConnectionOptions, QueueConnection, RedisClient, RedisOptions } from './redis/connection.js';

/** What a component needs to reach one queue's storage. */
export interface BackendOptions {
  connection?: QueueConnection;
  /** Key prefix (default `hopper`). */
  prefix: string;
  queueName: string;
  /** 'worker' connections wait out reconnects; 'command' ones are for producers and readers. */
  role: 'command' | 'worker';
  /** Receives connection errors (once per outage). */
  onConnectionError?: (err: Error) => void;
}

/**
 * Creates the backend for one queue: SQLite for a `sqlite:<path>` or `sqlite::memory:`
 * connection (better-sqlite3 is loaded then, and only then), Redis otherwise. Every operation
 * goes through the seam's error boundary (guard.ts): no raw ReplyError, SqliteError or TypeError
 * reaches a caller.
 */
export function createBackend(options: BackendOptions): QueueBackend {
  const { connection, queueName } = options;
  if (isSqliteUrl(connection)) {
    sqlitePath(connection);
    try {
      return guardBackend(
        new SqliteQueueBackend({ url: connection, prefix: options.prefix, queueName, onConnectionError: options.onConnectionError }),
        'sqlite',
        queueName,
      );
    } catch (err) {
      throw toTypedError(err, 'open', 'sqlite', queueName);
    }
  }
  return guardBackend(new RedisQueueBackend(options), 'redis', queueName);
}

/** Creates the admin reader for every queue under `prefix`. */
export function createAdmin(options: { connection?: QueueConnection; prefix: string }): BackendAdmin {
  if (isSqliteUrl(options.connection)) return guardBackend(new SqliteAdmin(options.connection, options.prefix), 'sqlite', '');
  return guardBackend(new RedisAdmin(options.connection, options.prefix), 'redis', '');
}
