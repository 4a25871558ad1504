/**
 * The seam of the reads and writes that span every queue under one prefix (listing queues, the
 * server's facts, the audit log), beside the per-queue QueueBackend (backend.ts).
 */
import type { ServerFacts } from './records.js';

/** Reads across the queues under one prefix (the base of the admin API, and of the test audit). */
export interface BackendAdmin {
  /** Names of the queues that exist under the prefix. */
  listQueues(): Promise<string[]>;
  /**
   * Every prefix on the server (or database) holding Hopper queues, with how many, sorted: what
   * the CLI names when the prefix it was given holds none. Scans the whole keyspace on Redis.
   */
  listPrefixes(): Promise<{ prefix: string; queues: number }[]>;
  /** The server's settings and health figures that matter to a queue (for `hopper doctor`). */
  serverFacts(): Promise<ServerFacts>;
  /** The server's raw `INFO` text (for tools that parse it themselves, such as Bull Board). */
  serverInfo(): Promise<string>;
  /** Adds an entry (JSON) in front of the prefix's audit log, keeping the newest `max`. */
  appendAudit(entry: string, max: number): Promise<void>;
  /** The newest `count` audit entries (JSON), newest first. */
  readAudit(count: number): Promise<string[]>;
  /** Deletes every key under the prefix (tests and tools only). */
  deleteAll(): Promise<number>;
  close(): Promise<void>;
}
