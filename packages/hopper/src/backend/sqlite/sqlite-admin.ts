/**
 * Reads across the queues under one prefix of a SQLite database: which queues exist, the audit
 * log, and a prefix-wide delete for tests and tools.
 */
import { METRICS_TABLES } from './sqlite-metrics.js';
import type { BackendAdmin, ServerFacts } from '../backend.js';
import { BackendUnsupportedError } from '../../job/errors.js';
import { acquireStore, releaseStore, type SqliteStore } from './database.js';

const QUEUE_TABLES = [
  'jobs',
  'events',
  'logs',
  'dedup',
  'requests',
  'workers',
  'deps',
  'steps',
  'cancel_children',
  'schedulers',
  'scheduler_fired',
  'groups',
  'group_window',
  'group_weighted_window',
  ...METRICS_TABLES,
];

export class SqliteAdmin implements BackendAdmin {
  private storePromise: Promise<SqliteStore> | undefined;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
  ) {}

  private store(): Promise<SqliteStore> {
    this.storePromise ??= acquireStore(this.url);
    return this.storePromise;
  }

  async listQueues(): Promise<string[]> {
    const s = await this.store();
    const rows = s.stmt('SELECT name FROM queues WHERE prefix = ? AND epoch IS NOT NULL ORDER BY name').all(this.prefix) as {
      name: string;
    }[];
    return rows.map((r) => r.name);
  }

  async listPrefixes(): Promise<{ prefix: string; queues: number }[]> {
    const s = await this.store();
    const rows = s.stmt('SELECT prefix, COUNT(*) AS queues FROM queues WHERE epoch IS NOT NULL GROUP BY prefix ORDER BY prefix').all() as {
      prefix: string;
      queues: number;
    }[];
    return rows.map((r) => ({ prefix: r.prefix, queues: Number(r.queues) }));
  }

  /**
   * The database's facts for `hopper doctor`: its version (`SQLite <version>`) and the clock its
   * operations use (the process's, as every process sharing the file runs on this machine). The
   * Redis server's settings and figures (eviction, memory, persistence, connections, slow log) do
   * not exist here: undefined, so the doctor's server checks find nothing and its queue checks run.
   */
  async serverFacts(): Promise<ServerFacts> {
    const s = await this.store();
    const { version } = s.stmt('SELECT sqlite_version() AS version').get() as { version: string };
    return {
      version: `SQLite ${version}`,
      now: Date.now(),
      maxmemoryPolicy: undefined,
      maxmemory: undefined,
      usedMemory: undefined,
      aof: undefined,
      appendfsync: undefined,
      rdb: undefined,
      evictedKeys: undefined,
      rejectedConnections: undefined,
      slowlog: [],
    };
  }

  serverInfo(): Promise<string> {
    return Promise.reject(new BackendUnsupportedError('server info (INFO)'));
  }

  async appendAudit(entry: string, max: number): Promise<void> {
    const s = await this.store();
    s.write(() => {
      s.stmt('INSERT INTO audit (prefix, entry) VALUES (?, ?)').run(this.prefix, entry);
      s.stmt('DELETE FROM audit WHERE prefix = ? AND n NOT IN (SELECT n FROM audit WHERE prefix = ? ORDER BY n DESC LIMIT ?)').run(
        this.prefix,
        this.prefix,
        max,
      );
    });
  }

  async readAudit(count: number): Promise<string[]> {
    const s = await this.store();
    const rows = s.stmt('SELECT entry FROM audit WHERE prefix = ? ORDER BY n DESC LIMIT ?').all(this.prefix, count) as { entry: string }[];
    return rows.map((r) => r.entry);
  }

  async deleteAll(): Promise<number> {
    const s = await this.store();
    return s.write(() => {
      let deleted = 0;
      const queues = s.stmt('SELECT qid FROM queues WHERE prefix = ?').all(this.prefix) as { qid: number }[];
      for (const { qid } of queues) {
        for (const table of QUEUE_TABLES) deleted += s.stmt(`DELETE FROM ${table} WHERE qid = ?`).run(qid).changes;
      }
      deleted += s.stmt('DELETE FROM queues WHERE prefix = ?').run(this.prefix).changes;
      deleted += s.stmt('DELETE FROM audit WHERE prefix = ?').run(this.prefix).changes;
      return deleted;
    });
  }

  async close(): Promise<void> {
    const pending = this.storePromise;
    this.storePromise = undefined;
    if (pending) releaseStore(this.url, await pending);
  }
}
