/**
 * The operator's view of every queue under one prefix: which queues exist, their counts, and a
 * Queue to act on each. The `hopper` CLI, the metrics exporter and the dashboard share it, so
 * they list and count the same way.
 */
import { createAdmin, type QueueConnection } from '../backend/create.js';
import type { BackendAdmin } from '../backend/backend.js';
import { ClosedError, QueueNotFoundError } from '../job/errors.js';
import { validatePrefix, validateQueueName } from '../job/options.js';
import { validateConnection } from '../validation/connection.js';
import { JOB_STATES, type JobState } from '../job/states.js';
import { DEFAULT_PREFIX } from '../api/queue-base.js';
import { Queue } from '../api/queue.js';
import { checkQueue, checkServer, sortFindings, type DoctorOptions, type DoctorReport, type Finding } from './doctor.js';

/** Options of {@link Admin}. */
export interface AdminOptions {
  /** How to reach Redis (ioredis options, a URL, or an ioredis instance you keep ownership of). Default: localhost:6379. */
  connection?: QueueConnection;
  /** The key prefix of the queues to operate (default `hopper`). */
  prefix?: string;
}

/** One operator action, as the dashboard records it. */
export interface AuditEntry {
  /** When (ms). */
  at: number;
  /** Who (the authenticated user, or a token's label). */
  who: string;
  /** What: `retry`, `remove`, `pause`, `clean`, `replay`, ... */
  action: string;
  /** On what: `queue` or `queue/jobId`. */
  target: string;
  /** The outcome or the parameters, briefly. */
  detail?: string;
}

/** Audit entries kept per prefix (the oldest are dropped). */
export const AUDIT_LOG_MAX = 1000;

/** One queue at a glance: what `hopper queues` prints and the dashboard's home page shows. */
export interface QueueOverview {
  /** The queue's name. */
  name: string;
  /** Whether the queue is paused (its workers take no new job). */
  paused: boolean;
  /** Jobs per state. */
  counts: Record<JobState, number>;
  /** Workers registered on the queue (alive within their heartbeat). */
  workers: number;
  /** Job schedulers of the queue. */
  schedulers: number;
  /** Milliseconds since the oldest waiting (not prioritized) job was added; `null` when none waits. */
  oldestWaitingMs: number | null;
}

/**
 * Operates every queue under one prefix.
 *
 * An Admin never creates a queue: {@link Admin.queue} refuses a name that has no queue in Redis
 * (a typo in an operator's command must not leave a new empty queue behind).
 *
 * @example
 * const admin = new Admin({ connection: { host: '127.0.0.1', port: 6379 } });
 * for (const q of await admin.overview()) console.log(q.name, q.counts.waiting, q.counts.failed);
 * const emails = await admin.queue('emails');
 * await emails.retryJobs({ state: 'failed' });
 * await admin.close();
 */
export class Admin {
  /** The key prefix this Admin operates. */
  readonly prefix: string;
  private readonly connection: QueueConnection | undefined;
  private readonly backend: BackendAdmin;
  private readonly queues = new Map<string, Queue>();
  private closed = false;

  constructor(opts: AdminOptions = {}) {
    this.prefix = opts.prefix ?? DEFAULT_PREFIX;
    // Checked before connecting: a refused prefix or connection opens nothing.
    validatePrefix(this.prefix);
    validateConnection(opts.connection);
    this.connection = opts.connection;
    this.backend = createAdmin({ connection: opts.connection, prefix: this.prefix });
  }

  /** The names of the queues under this prefix, sorted. */
  async listQueues(): Promise<string[]> {
    this.assertOpen();
    return this.backend.listQueues();
  }

  /**
   * Every key prefix on this server (or SQLite database) that holds Hopper queues, with how many
   * queues each, sorted by prefix. Scans the whole keyspace on Redis: for tools, not hot paths.
   * @example (await admin.listPrefixes()) // [{ prefix: 'hopper', queues: 3 }, { prefix: 'hopper-demo', queues: 11 }]
   */
  async listPrefixes(): Promise<{ prefix: string; queues: number }[]> {
    this.assertOpen();
    return this.backend.listPrefixes();
  }

  /**
   * A Queue for the existing queue `name`, to read and act on it with the Queue API. The Admin
   * owns it: {@link Admin.close} closes it.
   *
   * @throws QueueNotFoundError when no queue of that name exists under the prefix.
   */
  async queue(name: string): Promise<Queue> {
    this.assertOpen();
    validateQueueName(name);
    const known = this.queues.get(name);
    if (known) return known;
    const names = await this.listQueues();
    if (!names.includes(name)) {
      const hint =
        names.length > 0 ? `queues under it: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}` : 'it holds no queue';
      throw new QueueNotFoundError(`No queue named "${name}" under the prefix "${this.prefix}" (${hint}). Check the name and the prefix.`);
    }
    return this.open(name);
  }

  /** The Admin's Queue for `name`, known to exist. */
  private async open(name: string): Promise<Queue> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      this.queues.set(name, queue);
    }
    await queue.waitUntilReady();
    return queue;
  }

  /** One {@link QueueOverview} per queue (all queues under the prefix, or the named ones), sorted by name. */
  async overview(names?: string[]): Promise<QueueOverview[]> {
    const listed = names === undefined;
    const wanted = names ?? (await this.listQueues());
    const out: QueueOverview[] = [];
    // Names just listed exist: opening them needs no second listing each (a listing scans the
    // keyspace, seconds on a server holding a million jobs).
    for (const name of wanted) out.push(await this.overviewOf(listed ? await this.open(name) : await this.queue(name)));
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Audits the server and every queue under the prefix (or the named ones) for the mistakes that
   * lose jobs or make queues fall behind; see docs/cli.md ("hopper doctor") for every check.
   * Reads only.
   *
   * @example
   * const report = await admin.doctor();
   * for (const f of report.findings) console.log(f.severity, f.queue ?? 'redis', f.title, '->', f.fix);
   */
  async doctor(options: DoctorOptions & { queues?: string[] } = {}): Promise<DoctorReport> {
    this.assertOpen();
    const overviews = await this.overview(options.queues);
    const server = await this.backend.serverFacts();
    const pending = overviews.reduce((n, q) => n + q.counts.waiting + q.counts.prioritized + q.counts.delayed + q.counts.active, 0);
    const findings: Finding[] = checkServer(server, pending);
    for (const overview of overviews) findings.push(...(await checkQueue(await this.queue(overview.name), overview, server.now, options)));
    return { checkedAt: Date.now(), server, queues: overviews.map((q) => q.name), findings: sortFindings(findings) };
  }

  /** Records an operator action in the prefix's audit log (bounded: the newest {@link AUDIT_LOG_MAX} are kept). */
  async recordAudit(entry: AuditEntry): Promise<void> {
    this.assertOpen();
    await this.backend.appendAudit(JSON.stringify(entry), AUDIT_LOG_MAX);
  }

  /** The newest `count` audit entries (at most {@link AUDIT_LOG_MAX}), newest first. */
  async getAuditLog(count = 100): Promise<AuditEntry[]> {
    this.assertOpen();
    const n = Math.max(1, Math.min(AUDIT_LOG_MAX, Math.floor(count)));
    return (await this.backend.readAudit(n)).map((raw) => JSON.parse(raw) as AuditEntry);
  }

  /** The Redis server's raw `INFO` text (what Bull Board's Redis panel parses). */
  async redisInfo(): Promise<string> {
    this.assertOpen();
    return this.backend.serverInfo();
  }

  /** Closes every Queue this Admin opened, and its own connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
    await this.backend.close();
  }

  private async overviewOf(queue: Queue): Promise<QueueOverview> {
    const [raw, paused, workers, schedulers, oldest] = await Promise.all([
      queue.getJobCounts(...JOB_STATES),
      queue.isPaused(),
      queue.getWorkersCount(),
      queue.getJobSchedulersCount(),
      // The head of the wait list (ascending order) is the job that has waited longest.
      queue.getJobs('waiting', 0, 0, true),
    ]);
    const counts = Object.fromEntries(JOB_STATES.map((state) => [state, raw[state] ?? 0])) as Record<JobState, number>;
    const head = oldest[0];
    return {
      name: queue.name,
      paused,
      counts,
      workers,
      schedulers,
      oldestWaitingMs: head ? Math.max(0, Date.now() - head.timestamp) : null,
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new ClosedError('This Admin is closed: create a new one.');
  }
}
