/**
 * What Queue, Worker and QueueEvents share: the connection to one queue's backend, the start-up
 * checks (Redis 7+, eviction policy), readiness, safe error emission and closing.
 */
import { EventEmitter } from 'node:events';
import type { QueueBackend, ServerInfo } from '../backend/backend.js';
import { createBackend, type QueueConnection, type RedisClient } from '../backend/create.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { randomBytes } from 'node:crypto';
import { BackendUnsupportedError, ClosedError, DatasetResetError, UnsupportedRedisError } from '../job/errors.js';
import { validateComponentOptions, type Component } from '../validation/component-options.js';
import type { JobContext } from '../job/job.js';
import { Starter } from './starter.js';
import { safeTimeout, type SafeTimer } from '../clock/timers.js';

/** Options every Hopper component takes. */
export interface QueueBaseOptions {
  /** How to reach Redis (ioredis options, a URL, or an ioredis instance you keep ownership of). Default: localhost:6379. */
  connection?: QueueConnection;
  /** Prefix of every key (default `hopper`). A `{tag}` in it sets the Redis Cluster hash tag for all queues under it. */
  prefix?: string;
  /**
   * The clock deciding due times. Default: Redis's own clock. Tests pass a `FakeClock` to drive
   * delays, lock expiry and stall rescue without sleeping.
   */
  clock?: Clock;
  /** Accepted for BullMQ compatibility: Hopper checks the server once at start (Redis 7+ or Valkey 7.2+ is required). */
  skipVersionCheck?: boolean;
  /** Accepted for BullMQ compatibility: Hopper's commands wait for the connection they need. */
  skipWaitingForReady?: boolean;
  /** Accepted for BullMQ compatibility: Hopper opens the blocking connections each role needs by itself. */
  blockingConnection?: boolean;
}

/** How long closing a component's connections may wait for the server before dropping them, ms. */
export const CLOSE_GRACE_MS = 1_000;

/** The default key prefix. */
export const DEFAULT_PREFIX = 'hopper';

const warnedPolicies = new Set<string>();

/** Checks the server Hopper connected to: Redis 7+ (or Valkey 7.2+), and warns if it may evict keys. */
export function checkServer(info: ServerInfo): void {
  if (info.kind === 'sqlite') return;
  const major = Number.parseInt(info.version, 10);
  if (!(major >= 7)) {
    throw new UnsupportedRedisError(
      `Hopper needs Redis 7.0 or newer (or Valkey 7.2+); this server is Redis ${info.version}. Upgrade the server.`,
    );
  }
  const policy = info.maxmemoryPolicy;
  if (policy !== undefined && policy !== 'noeviction' && !warnedPolicies.has(policy)) {
    warnedPolicies.add(policy);
    process.emitWarning(
      `Redis maxmemory-policy is "${policy}": under memory pressure Redis may evict job keys and lose jobs. ` +
        'Set `maxmemory-policy noeviction` on the Redis server used by Hopper.',
      { type: 'HopperWarning', code: 'HOPPER_EVICTION_POLICY' },
    );
  }
}

/**
 * The base of Queue, Worker and QueueEvents, as BullMQ's `QueueBase`: one queue's connection, its
 * start, readiness and closing. A class of your own may extend it (as in BullMQ) to run Redis
 * commands of its own on the queue's connection: `await this.client` is the ioredis client.
 *
 * @example
 * class StreamWriter extends QueueBase {
 *   async write(entry: string): Promise<void> {
 *     const client = await this.client;
 *     await client.xadd(this.name, '*', 'entry', entry);
 *   }
 * }
 * const writer = new StreamWriter('audit', { connection: { host: '127.0.0.1' } });
 * await writer.write('started');
 * await writer.close();
 */
export class QueueBase extends EventEmitter implements JobContext {
  /** The queue's name. */
  readonly name: string;
  readonly queueName: string;
  /** The key prefix. */
  readonly prefix: string;
  /** @internal */
  readonly backend: QueueBackend;
  /** @internal */
  readonly clock: Clock;
  /** Set once `close()` has finished: later calls reject with ClosedError. */
  protected closed = false;
  /** Set when `close()` starts: connection errors from then on are expected, not reported. */
  protected closing = false;
  /** The start: connect, check, set up; tried again until it succeeds (api/starter.ts). */
  protected readonly starter: Starter;

  /** The options it was created with (BullMQ's `opts`). */
  readonly opts: QueueBaseOptions;

  /**
   * Opens the queue's connection (in the background: calls wait for it). Checks the queue name and
   * every option of `component`'s set (the validation layer) before anything is opened: a refused
   * option leaves no connection behind. A subclass of your own passes `name` and `opts` only: the
   * base options are checked, the others are left to it.
   *
   * @param role internal: the connection's role (Hopper's components).
   * @param component internal: whose option set to check (Hopper's components).
   */
  constructor(name: string, opts: QueueBaseOptions = {}, role: 'command' | 'worker' = 'command', component: Component = 'QueueBase') {
    super();
    validateComponentOptions(component, name, opts);
    const prefix = opts.prefix ?? DEFAULT_PREFIX;
    this.name = name;
    this.queueName = name;
    this.opts = opts;
    this.prefix = prefix;
    this.clock = opts.clock ?? systemClock;
    // Errors of a connection being closed on purpose are not worth reporting.
    const report = (err: unknown): void => {
      if (!this.closed && !this.closing) this.emitError(err);
    };
    this.backend = createBackend({ connection: opts.connection, prefix, queueName: name, role, onConnectionError: report });
    const what = `${this.constructor.name} "${name}"`;
    this.starter = new Starter({
      attempt: () => this.start(),
      timeoutMs: () => this.backend.startTimeoutMs,
      timeoutError: (ms) => this.backend.timeoutError(`${what} starting`, ms),
      unavailable: () => this.backend.unavailable(),
      what,
      // A failed start is reported (once per kind of failure) and tried again until it succeeds.
      onError: report,
    });
    this.starter.begin();
  }

  /** The queue's epoch seen at start: a different one later means Redis lost the queue's data. */
  private epoch: string | undefined;

  private async start(): Promise<void> {
    checkServer(await this.backend.connect());
    await this.init();
  }

  /** Component-specific start-up, after the server checks. Default: record the queue's epoch. */
  protected async init(): Promise<void> {
    await this.initQueue(-1);
  }

  /** Records queue settings (maxEvents -1: leave them) and learns the queue's epoch. */
  protected async initQueue(maxEvents: number, childFailure?: 'fail' | 'wait'): Promise<void> {
    const { epoch } = await this.backend.initQueue({ maxEvents, epoch: randomBytes(8).toString('hex'), childFailure });
    this.epoch = epoch;
  }

  /**
   * Compares an epoch read back from Redis with the one seen at start. A missing or different
   * epoch means the dataset was reset (flushed, or restarted without persistence) under this
   * process: that is reported loudly as a DatasetResetError, never taken for an empty queue; the
   * queue is then re-initialised so work can go on.
   */
  protected checkEpoch(stored: string): void {
    if (this.epoch === undefined || stored === this.epoch) return;
    const previous = this.epoch;
    this.epoch = undefined;
    this.emitError(
      new DatasetResetError(
        `Redis lost the data of queue "${this.name}" (epoch ${previous} is now ${stored || 'missing'}): the server was flushed or restarted without persistence, ` +
          'so jobs added before may be gone. Enable AOF (appendonly yes, appendfsync always) or replication for durability.',
      ),
    );
    this.initQueue(-1).catch((err: unknown) => this.emitError(err));
  }

  /**
   * @internal resolves once connected and checked. Rejects with ClosedError if closed; with a typed
   * error (ConnectionError, ConnectionTimeoutError, ...) if the start fails or takes longer than the
   * backend's start bound (Redis: `connectTimeout`, default 10 s), or at once while the backend is
   * known unreachable. A failed start is tried again in the background; the next call waits for
   * the attempt under way.
   */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError(`This ${this.constructor.name} for queue "${this.name}" is closed.`));
    return this.starter.ready();
  }

  /** @internal resolves once started, however long that takes (a Worker's processing waits for it); rejects when closed. */
  whenStarted(): Promise<void> {
    return this.starter.whenStarted();
  }

  /**
   * The queue's qualified name, `<prefix>:<name>` (as in BullMQ): what a child's
   * `parent.queue` names, and the start of every job's public key (`job.parentKey`, the keys of
   * `getChildrenValues` and `getDependencies`).
   */
  get qualifiedName(): string {
    return `${this.prefix}:${this.name}`;
  }

  /**
   * The public key `<prefix>:<name>:<type>`, as BullMQ's `toKey`. With a job id it is that job's
   * public key, the one `getChildrenValues`, `getDependencies` and `job.parentKey` use. It names
   * a job or a part of the queue for display and comparison; Hopper's storage keys carry a
   * Cluster hash tag and are not meant to be read directly.
   */
  toKey(type: string): string {
    return `${this.qualifiedName}:${type}`;
  }

  /**
   * Resolves once the connection is up and the server checked (Redis 7+), to the Redis client of
   * the queue's command connection, as in BullMQ (on SQLite: to `undefined`, typed as BullMQ's).
   * Rejects within the start bound (Redis: the connection's `connectTimeout`, default 10 s;
   * SQLite: 10 s) with a typed error (ConnectionError, ConnectionTimeoutError) if the backend does
   * not answer; the component keeps trying, and a later call waits again.
   */
  async waitUntilReady(): Promise<RedisClient> {
    await this.ready();
    return this.backend.redisClient() as RedisClient;
  }

  /**
   * The ioredis client (`Redis` or `Cluster`) of the queue's command connection, once ready (as
   * BullMQ's `client`), for Redis commands of your own. Hopper's keys are its own: read and change
   * jobs through the API, never through this client. Rejects with BackendUnsupportedError on
   * SQLite, and as {@link waitUntilReady} does while the server cannot be reached.
   */
  get client(): Promise<RedisClient> {
    return this.ready().then(() => {
      const client = this.backend.redisClient() as RedisClient | undefined;
      if (client === undefined) {
        throw new BackendUnsupportedError(
          `${this.constructor.name} "${this.name}": client is a Redis client, and this queue is on SQLite.`,
        );
      }
      return client;
    });
  }

  /**
   * Closes the queue's connections (those Hopper opened; a client you passed in stays open). Queue,
   * Worker and QueueEvents first end their own work (see theirs).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    await this.closeBackend();
    this.closed = true;
  }

  /**
   * Closes the backend's connections within {@link CLOSE_GRACE_MS}: past it (a server that does not
   * answer QUIT), they are dropped at once. Stops the start's retries first.
   */
  protected async closeBackend(): Promise<void> {
    this.starter.stop();
    let timer: SafeTimer | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = safeTimeout(resolve, CLOSE_GRACE_MS, { ref: false });
    });
    try {
      await Promise.race([this.backend.close().catch(() => undefined), grace]);
    } finally {
      timer?.cancel();
      this.backend.disconnect();
    }
  }

  /**
   * Emits `event`. A listener that throws does not break the caller (a worker's job loop, the
   * events reader): the exception becomes an `error` event, as in BullMQ.
   */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    try {
      return super.emit(event, ...args);
    } catch (err) {
      if (event === 'error') console.error(`[hopper] ${this.constructor.name} "${this.name}": an 'error' listener threw:`, err);
      else this.emitError(err);
      return true;
    }
  }

  /** Emits `error` if anyone listens; otherwise reports it on stderr rather than crashing the process. */
  protected emitError(err: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else console.error(`[hopper] ${this.constructor.name} "${this.name}":`, err);
  }
}
