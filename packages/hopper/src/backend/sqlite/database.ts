/**
 * The SQLite backend's database: one better-sqlite3 `Database` per URL per process (shared by
 * every Queue, Worker, QueueEvents and FlowProducer of the process using that URL), its schema
 * and migrations, cached prepared statements, the in-process wake-up hub (other processes' writes
 * reach it through the wake file, sqlite-wake.ts), and the write transaction.
 *
 * `better-sqlite3` is an optional peer dependency: it is loaded here, lazily, the first time a
 * `sqlite:` connection is used, so a Redis user never loads it.
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { BackendDriverMissingError, ConnectionError, DatabaseLostError, hopperErrorCode, InvalidOptionsError } from '../../job/errors.js';
import { METRICS_SCHEMA } from './sqlite-metrics.js';
import { GROUP_WEIGHTS_SCHEMA } from './sqlite-group-weights.js';
import { WakeFile } from './sqlite-wake.js';
import { sqliteUrlPath } from '../../validation/connection.js';

/** The schema version this code writes and reads (the `meta` table's `schema_version`). */
export const SCHEMA_VERSION = 6;

/** How often an open database file is checked for deletion or replacement (ms), besides its fs.watch. */
const FILE_CHECK_MS = 1_000;

/** How long a write waits for another process's transaction before failing (ms). */
export const BUSY_TIMEOUT_MS = 5_000;

/**
 * Waiting for another process's write lock: the first retry after 0.05 ms, doubling up to 0.5 ms,
 * until BUSY_TIMEOUT_MS. SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25... ms between
 * tries, so a writer that found the lock taken for 0.2 ms slept 1 ms or more (and, at 1,000
 * writes/s from two processes, often 8 or 18 ms): the bulk of the cross-process latency.
 */
const LOCK_RETRY_FIRST_MS = 0.05;
const LOCK_RETRY_MAX_MS = 0.5;
/** The cell a lock wait sleeps on (Atomics.wait: a blocking sleep with sub-millisecond steps, as SQLite's busy handler blocks). */
const lockSleep = new Int32Array(new SharedArrayBuffer(4));

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Tells whether a connection option selects the SQLite backend (`sqlite:<path>` or `sqlite::memory:`). */
export function isSqliteUrl(connection: unknown): connection is string {
  return typeof connection === 'string' && connection.startsWith('sqlite:');
}

/** The file path (or ':memory:') a `sqlite:` URL names (its accepted forms: validation/connection.ts). */
export function sqlitePath(url: string): string {
  return sqliteUrlPath(url);
}

/** Migrations by the version they lead to; each runs once, in one transaction. */
const MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE queues (
      qid INTEGER PRIMARY KEY AUTOINCREMENT,
      prefix TEXT NOT NULL,
      name TEXT NOT NULL,
      epoch TEXT,
      max_events INTEGER NOT NULL DEFAULT 10000,
      paused INTEGER NOT NULL DEFAULT 0,
      next_id INTEGER NOT NULL DEFAULT 0,
      counter INTEGER NOT NULL DEFAULT 0,
      signal INTEGER NOT NULL DEFAULT 0,
      stalled_check INTEGER NOT NULL DEFAULT 0,
      child_failure TEXT NOT NULL DEFAULT '',
      events_trimmed INTEGER NOT NULL DEFAULT 0,
      settings TEXT NOT NULL DEFAULT '{}',
      UNIQUE (prefix, name)
    );
    CREATE TABLE jobs (
      qid INTEGER NOT NULL,
      id TEXT NOT NULL,
      name TEXT NOT NULL,
      data TEXT NOT NULL,
      opts TEXT NOT NULL DEFAULT '',
      state TEXT NOT NULL,
      score INTEGER NOT NULL DEFAULT 0,
      ts INTEGER NOT NULL,
      attempts_made INTEGER NOT NULL DEFAULT 0,
      attempts_started INTEGER NOT NULL DEFAULT 0,
      stalled_counter INTEGER NOT NULL DEFAULT 0,
      priority INTEGER NOT NULL DEFAULT 0,
      delay INTEGER NOT NULL DEFAULT 0,
      progress TEXT,
      processed_on INTEGER,
      processed_by TEXT,
      finished_on INTEGER,
      returnvalue TEXT,
      failed_reason TEXT,
      stacktrace TEXT,
      token TEXT,
      moved_token TEXT,
      dedup_id TEXT,
      dedup_ttl_id TEXT,
      parent_qid INTEGER,
      parent_id TEXT,
      policy TEXT NOT NULL DEFAULT '',
      unsealed INTEGER NOT NULL DEFAULT 0,
      continue_flag INTEGER NOT NULL DEFAULT 0,
      fail_mark TEXT,
      cancel_reason TEXT,
      PRIMARY KEY (qid, id)
    );
    CREATE TABLE cancel_children (
      qid INTEGER NOT NULL,
      id TEXT NOT NULL,
      child_key TEXT NOT NULL,
      PRIMARY KEY (qid, id, child_key)
    );
    CREATE TABLE deps (
      qid INTEGER NOT NULL,
      id TEXT NOT NULL,
      child_key TEXT NOT NULL,
      child_qid INTEGER NOT NULL,
      child_id TEXT NOT NULL,
      pending INTEGER NOT NULL DEFAULT 1,
      processed TEXT,
      failed TEXT,
      ignored TEXT,
      PRIMARY KEY (qid, id, child_key)
    );
    CREATE INDEX deps_pending ON deps (qid, id, pending);
    CREATE INDEX jobs_by_state ON jobs (qid, state, score);
    CREATE TABLE events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      qid INTEGER NOT NULL,
      at INTEGER NOT NULL,
      event TEXT NOT NULL,
      fields TEXT NOT NULL
    );
    CREATE INDEX events_by_queue ON events (qid, seq);
    CREATE TABLE logs (
      n INTEGER PRIMARY KEY AUTOINCREMENT,
      qid INTEGER NOT NULL,
      job_id TEXT NOT NULL,
      line TEXT NOT NULL
    );
    CREATE INDEX logs_by_job ON logs (qid, job_id, n);
    CREATE TABLE dedup (
      qid INTEGER NOT NULL,
      dedup_id TEXT NOT NULL,
      job_id TEXT NOT NULL,
      expires_at INTEGER,
      PRIMARY KEY (qid, dedup_id)
    );
    CREATE TABLE requests (
      qid INTEGER NOT NULL,
      producer TEXT NOT NULL,
      seq INTEGER NOT NULL,
      result TEXT NOT NULL,
      PRIMARY KEY (qid, producer, seq)
    );
    CREATE TABLE workers (
      qid INTEGER NOT NULL,
      worker_id TEXT NOT NULL,
      info TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (qid, worker_id)
    );
    CREATE TABLE steps (
      qid INTEGER NOT NULL,
      job_id TEXT NOT NULL,
      key TEXT NOT NULL,
      record TEXT NOT NULL,
      PRIMARY KEY (qid, job_id, key)
    );
    CREATE TABLE audit (n INTEGER PRIMARY KEY AUTOINCREMENT, prefix TEXT NOT NULL, entry TEXT NOT NULL);
  `,
  // The sliding-window rate limit's starts (sqlite-limits.ts).
  2: `
    CREATE TABLE rate_window (
      qid INTEGER NOT NULL,
      at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      member TEXT NOT NULL
    );
    CREATE INDEX rate_window_by_queue ON rate_window (qid, at);
  `,
  // A dead letter's origin (sqlite-deadletters.ts).
  3: `ALTER TABLE jobs ADD COLUMN origin TEXT;`,
  // Job schedulers and their occurrences (sqlite-schedulers.ts); groups (sqlite-groups.ts).
  4: `
    CREATE TABLE schedulers (
      qid INTEGER NOT NULL,
      id TEXT NOT NULL,
      hash TEXT NOT NULL DEFAULT '',
      spec TEXT NOT NULL DEFAULT '',
      tpl TEXT NOT NULL DEFAULT '',
      ov TEXT NOT NULL DEFAULT '',
      cu TEXT NOT NULL DEFAULT '',
      cw INTEGER NOT NULL DEFAULT 0,
      lim INTEGER NOT NULL DEFAULT 0,
      paused INTEGER NOT NULL DEFAULT 0,
      last TEXT NOT NULL DEFAULT '',
      after INTEGER,
      pid TEXT NOT NULL DEFAULT '',
      run TEXT NOT NULL DEFAULT '',
      buf TEXT NOT NULL DEFAULT '',
      inst TEXT NOT NULL DEFAULT '',
      due INTEGER,
      prev TEXT NOT NULL DEFAULT '',
      hold TEXT NOT NULL DEFAULT '',
      fired INTEGER NOT NULL DEFAULT 0,
      skipped INTEGER NOT NULL DEFAULT 0,
      missed INTEGER NOT NULL DEFAULT 0,
      created INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL DEFAULT 0,
      score INTEGER,
      due_at INTEGER,
      PRIMARY KEY (qid, id)
    );
    CREATE INDEX schedulers_by_due ON schedulers (qid, due_at);
    CREATE TABLE scheduler_fired (
      qid INTEGER NOT NULL,
      sched_id TEXT NOT NULL,
      instant INTEGER NOT NULL,
      PRIMARY KEY (qid, sched_id, instant)
    );
    ALTER TABLE jobs ADD COLUMN sched_id TEXT;
    ALTER TABLE jobs ADD COLUMN sched_instant INTEGER;
    CREATE TABLE groups (
      qid INTEGER NOT NULL,
      id TEXT NOT NULL,
      st TEXT NOT NULL DEFAULT '',
      turn INTEGER,
      q INTEGER,
      reopen INTEGER,
      c INTEGER,
      lm INTEGER,
      ld INTEGER,
      ms INTEGER,
      w INTEGER,
      PRIMARY KEY (qid, id)
    );
    CREATE INDEX groups_by_turn ON groups (qid, st, turn);
    CREATE TABLE group_window (
      qid INTEGER NOT NULL,
      grp TEXT NOT NULL,
      at INTEGER NOT NULL,
      member TEXT NOT NULL
    );
    CREATE INDEX group_window_by_group ON group_window (qid, grp, at);
    ALTER TABLE jobs ADD COLUMN grp TEXT;
    CREATE INDEX jobs_by_group ON jobs (qid, grp, state, score);
  `,
  // Runs, costs and budgets (sqlite-runs.ts), weighted rate limits (sqlite-limits.ts), the add kept
  // for an active job (keepLastIfActive), job output streams (sqlite-output.ts).
  5: `
    ALTER TABLE jobs ADD COLUMN dedup_keep INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN run_id TEXT;
    ALTER TABLE jobs ADD COLUMN reported_cost REAL;
    ALTER TABLE jobs ADD COLUMN budget_tenant TEXT;
    ALTER TABLE jobs ADD COLUMN budget_cost REAL;
    ALTER TABLE jobs ADD COLUMN output_seq TEXT;
    CREATE TABLE dedup_next (
      qid INTEGER NOT NULL,
      dedup_id TEXT NOT NULL,
      name TEXT NOT NULL,
      data TEXT NOT NULL,
      opts TEXT NOT NULL,
      custom_id TEXT NOT NULL,
      priority INTEGER NOT NULL,
      delay INTEGER NOT NULL,
      lifo INTEGER NOT NULL,
      PRIMARY KEY (qid, dedup_id)
    );
    CREATE TABLE runs (
      qid INTEGER NOT NULL,
      run_id TEXT NOT NULL,
      last_turn TEXT,
      cost REAL NOT NULL DEFAULT 0,
      cancel_reason TEXT,
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (qid, run_id)
    );
    CREATE TABLE budget_window (
      qid INTEGER NOT NULL,
      tenant TEXT NOT NULL,
      at INTEGER NOT NULL,
      job_id TEXT NOT NULL,
      cost REAL NOT NULL
    );
    CREATE INDEX budget_window_by_tenant ON budget_window (qid, tenant, at);
    CREATE INDEX budget_window_by_job ON budget_window (qid, job_id);
    CREATE TABLE weighted_window (
      qid INTEGER NOT NULL,
      at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      member TEXT NOT NULL,
      weight REAL NOT NULL
    );
    CREATE INDEX weighted_window_by_queue ON weighted_window (qid, at);
    CREATE TABLE outputs (
      qid INTEGER NOT NULL,
      job_id TEXT NOT NULL,
      ms INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      kind TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (qid, job_id, ms, seq)
    );
  `, // Metrics (sqlite-metrics.ts: exact counters, per-minute counts, latency histograms), weighted
  // group limits (sqlite-group-weights.ts), and the cancel signal other processes' workers watch
  // (a job cancelled while active).
  6: `${METRICS_SCHEMA}${GROUP_WEIGHTS_SCHEMA}
    ALTER TABLE queues ADD COLUMN cancel_signal INTEGER NOT NULL DEFAULT 0;
  `,
};

/** One open database, shared by every component of the process that uses its URL. */
export class SqliteStore {
  readonly db: BetterSqlite3.Database;
  readonly memory: boolean;
  /** In-process wake-ups: `work:<qid>` when work may be ready, `events:<qid>` when events were added. */
  readonly hub = new EventEmitter();
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /**
   * The QueueEvents readers open in this process, by queue row id (queue.getQueueEvents): a
   * process lists its own readers only, as the database holds no connections to list.
   */
  readonly readers = new Map<number, Set<{ id: number; name: string }>>();
  private nextReader = 0;

  /** Registers a reader of queue `qid` named `name`; returns the function that removes it. */
  addReader(qid: number, name: string): () => void {
    const entry = { id: ++this.nextReader, name };
    let set = this.readers.get(qid);
    if (!set) this.readers.set(qid, (set = new Set()));
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }
  refs = 0;
  /** Cross-process wake-ups: the wake file of a file database (sqlite-wake.ts). */
  readonly wakes: WakeFile;
  /**
   * Set once the database file was deleted or replaced under this process (watchFile): every
   * later call fails with it, and no write goes to the unlinked file. The hub emits `lost`.
   */
  lost: DatabaseLostError | undefined;
  private fileWatch: { watcher: FSWatcher | undefined; timer: NodeJS.Timeout } | undefined;

  /**
   * Watches the file at `path` (the one opened: same device and inode): deleted, or replaced by
   * another file, the database is lost (see {@link lost}). An fs.watch notices a rename or delete
   * at once; a check every FILE_CHECK_MS is the fallback. Neither keeps the process alive.
   */
  watchFile(path: string): void {
    let opened: { dev: number; ino: number };
    try {
      const st = statSync(path);
      opened = { dev: st.dev, ino: st.ino };
    } catch {
      return;
    }
    const check = (): void => {
      if (this.lost) return;
      let now: { dev: number; ino: number } | undefined;
      try {
        const st = statSync(path);
        now = { dev: st.dev, ino: st.ino };
      } catch {
        now = undefined;
      }
      if (now && now.dev === opened.dev && now.ino === opened.ino) return;
      this.lost = new DatabaseLostError(
        `The SQLite database file ${path} was ${now ? 'replaced by another file' : 'deleted'} while this process had it open: ` +
          'writes would go to a file no other process sees, so this process stops using it. Restore the file, or restart the processes on the new one.',
      );
      this.unwatchFile();
      this.hub.emit('lost', this.lost);
    };
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(path, { persistent: false }, (type) => {
        // An unlink of an open file is a 'change' (its link count) until the last descriptor closes.
        void type;
        check();
      });
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined;
    }
    const timer = setInterval(check, FILE_CHECK_MS);
    timer.unref();
    this.fileWatch = { watcher, timer };
  }

  /** Stops watching the database file. */
  unwatchFile(): void {
    if (!this.fileWatch) return;
    this.fileWatch.watcher?.close();
    clearInterval(this.fileWatch.timer);
    this.fileWatch = undefined;
  }

  constructor(db: BetterSqlite3.Database, memory: boolean) {
    this.db = db;
    this.memory = memory;
    this.hub.setMaxListeners(0);
    this.wakes = new WakeFile(this.hub);
  }

  /** The ceiling of the waits' adaptive poll (ms): see POLL_MAX_MS in sqlite-wake.ts. */
  get pollMaxMs(): number {
    return this.wakes.pollMaxMs;
  }

  /** A cached prepared statement. */
  stmt(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction (the SQL counterpart of one Lua script). When another
   * process holds the write lock, `BEGIN IMMEDIATE` is retried in steps of 0.05 to 0.5 ms (see
   * LOCK_RETRY_FIRST_MS) instead of SQLite's coarse busy handler, for up to BUSY_TIMEOUT_MS; the
   * connection's busy timeout is off only while this write runs (reads keep it).
   */
  write<T>(fn: () => T): T {
    if (this.lost) throw this.lost;
    if (this.memory || this.db.inTransaction) return this.db.transaction(fn).immediate();
    let entered = false;
    const tx = this.db.transaction(() => {
      entered = true;
      return fn();
    });
    this.stmt('PRAGMA busy_timeout = 0').get();
    try {
      const since = performance.now();
      let step = LOCK_RETRY_FIRST_MS;
      for (;;) {
        try {
          const result = tx.immediate();
          this.wakes.touch();
          return result;
        } catch (err) {
          // Only a BEGIN refused for the lock is retried: nothing of the transaction ran.
          if (entered || !isBusy(err) || performance.now() - since >= BUSY_TIMEOUT_MS) throw err;
        }
        Atomics.wait(lockSleep, 0, 0, step);
        step = Math.min(step * 2, LOCK_RETRY_MAX_MS);
      }
    } finally {
      this.stmt(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`).get();
    }
  }
}

const stores = new Map<string, Promise<SqliteStore>>();

type DatabaseConstructor = typeof BetterSqlite3;

async function loadDriver(): Promise<DatabaseConstructor> {
  try {
    const mod = (await import('better-sqlite3')) as unknown as { default?: DatabaseConstructor } & DatabaseConstructor;
    return mod.default ?? mod;
  } catch (err) {
    throw new BackendDriverMissingError(
      'A "sqlite:" connection needs better-sqlite3 (an optional peer dependency of hopper-queue), which is not installed (or failed to load): run `npm install better-sqlite3@12` (version 12; 13 needs Node 22).',
      { cause: err },
    );
  }
}

function migrate(db: BetterSqlite3.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  db.transaction(() => {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
    const current = row ? Number(row.value) : 0;
    if (current > SCHEMA_VERSION) {
      throw new InvalidOptionsError(
        `This SQLite database has schema version ${current}, newer than this Hopper (${SCHEMA_VERSION}): upgrade Hopper to use it.`,
      );
    }
    for (let v = current + 1; v <= SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
      String(SCHEMA_VERSION),
    );
  }).immediate();
}

async function open(url: string): Promise<SqliteStore> {
  const path = sqlitePath(url);
  const Database = await loadDriver();
  const memory = path === ':memory:';
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!memory) db.pragma('journal_mode = WAL');
    // WAL with synchronous NORMAL survives a process crash (a power loss may lose the last commits).
    db.pragma('synchronous = NORMAL');
    migrate(db);
  } catch (err) {
    db?.close();
    throw asOpenError(path, err);
  }
  const store = new SqliteStore(db, memory);
  if (!memory) {
    store.wakes.watch(path);
    store.watchFile(path);
  }
  return store;
}

/**
 * Why a database could not be opened, as a typed error that says what to do when the cause is
 * passing (its directory is missing, another process holds its lock past the busy timeout: a
 * ConnectionError, and the start is tried again). Hopper's own errors (a schema newer than this
 * Hopper) and SQLite's other errors pass through.
 */
function asOpenError(path: string, err: unknown): unknown {
  if (hopperErrorCode(err) !== undefined) return err;
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : '';
  const message = err instanceof Error ? err.message : String(err);
  const retry = 'Hopper keeps trying and recovers by itself.';
  // better-sqlite3 checks the directory itself (a TypeError without a code); SQLite says CANTOPEN.
  if (code.startsWith('SQLITE_CANTOPEN') || /directory does not exist/.test(message)) {
    const dir = dirname(resolve(path));
    const reason = existsSync(dir) ? `check that its directory ${dir} is writable` : `its directory ${dir} does not exist: create it`;
    return new ConnectionError(`The SQLite database ${path} cannot be opened (${message}): ${reason}. ${retry}`, { cause: err });
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new ConnectionError(
      `The SQLite database ${path} stayed locked by another process for ${BUSY_TIMEOUT_MS} ms while opening it. ` +
        `Check for a process stuck in a long transaction. ${retry}`,
      { cause: err },
    );
  }
  // Any other failure is the file's own (not a SQLite database, damaged, a permission): the seam
  // maps it to a BackendError that names SQLite's code and what to do (backend/guard.ts).
  return err;
}

/** Opens (or shares) the database of `url`; pair with {@link releaseStore}. */
export async function acquireStore(url: string): Promise<SqliteStore> {
  let pending = stores.get(url);
  if (!pending) {
    const opening = open(url).then((store) => {
      // A component opened in this process from now on opens the file now at the path.
      store.hub.once('lost', () => {
        if (stores.get(url) === opening) stores.delete(url);
      });
      return store;
    });
    pending = opening;
    stores.set(url, opening);
    opening.catch(() => {
      if (stores.get(url) === opening) stores.delete(url);
    });
  }
  const store = await pending;
  store.refs++;
  return store;
}

/**
 * Gives back a reference. A file database is closed when no component uses it any more; a
 * `sqlite::memory:` database lives as long as the process (closing it would lose its data).
 */
export function releaseStore(url: string, store: SqliteStore): void {
  store.refs--;
  if (store.refs > 0 || store.memory) return;
  // A lost store was already replaced in the map (a new one may be there now).
  if (!store.lost) stores.delete(url);
  store.unwatchFile();
  store.wakes.close();
  store.db.close();
}
