/**
 * Per-test Hopper environment: a private key prefix on the shared test Redis, factories for
 * queues, workers and event readers that are closed after the test, and the invariant audit
 * (every job in exactly one state structure) run on every queue of the prefix after each test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, inject } from 'vitest';
import {
  FakeClock,
  FlowProducer,
  Queue,
  QueueEvents,
  Worker,
  type Processor,
  type QueueEventsOptions,
  type QueueOptions,
  type WorkerOptions,
} from '../../src/index.js';
import { createAdmin, createBackend } from '../../src/backend/create.js';
import { ErrorWatch, type ErrorMatcher } from './errors.js';

export interface HopperEnv {
  /**
   * The connection of the backend under test: the Redis URL of the test server, or on SQLite
   * `sqlite::memory:` (a `sqlite:<temp file>` database for `useHopper({ processes: true })`).
   */
  readonly url: string;
  /** This test's key prefix. */
  readonly prefix: string;
  /** The fake clock, when the environment was created with `fakeClock: true`. */
  readonly clock: FakeClock | undefined;
  /** A queue name unique within the test run. */
  queueName(hint?: string): string;
  queue<D = unknown, R = unknown>(name: string, opts?: QueueOptions): Queue<D, R>;
  worker<D = unknown, R = unknown>(name: string, processor: Processor<D, R> | string | URL | null, opts?: WorkerOptions): Worker<D, R>;
  events(name: string, opts?: QueueEventsOptions): QueueEvents;
  /** A FlowProducer on this test's prefix. */
  flows(): FlowProducer;
  /** Registers something to close after the test (and watches its `error` events). */
  track<T extends { close(): Promise<void> }>(closable: T): T;
  /**
   * Declares `error` events this test provokes on purpose (all with `true`, or those matching a
   * pattern or predicate). Any other `error` event of a tracked component fails the test.
   */
  expectErrors(matcher?: ErrorMatcher): void;
  /** The `error` events seen so far by tracked components. */
  errors(): unknown[];
  /** Skips the invariant audit for this test (for tests that corrupt state on purpose). */
  skipInvariants(): void;
}

interface EnvState {
  env: HopperEnv;
  /** Removes the test's temporary database, if it has one. */
  dispose: () => void;
  closables: { close(): Promise<void> }[];
  audit: boolean;
  errors: ErrorWatch;
}

/** Runs the invariant audit on every queue under `prefix`; throws listing the violations. */
export async function assertInvariants(url: string, prefix: string): Promise<void> {
  const admin = createAdmin({ connection: url, prefix });
  try {
    const problems: string[] = [];
    for (const name of await admin.listQueues()) {
      const backend = createBackend({ connection: url, prefix, queueName: name, role: 'command' });
      try {
        for (const p of await backend.checkInvariants()) problems.push(`queue ${name}: ${p}`);
      } finally {
        await backend.close();
      }
    }
    if (problems.length > 0) throw new Error(`Invariant violations:\n  ${problems.join('\n  ')}`);
  } finally {
    await admin.close();
  }
}

/** Deletes every key under `prefix`. */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const admin = createAdmin({ connection: url, prefix });
  try {
    await admin.deleteAll();
  } finally {
    await admin.close();
  }
}

let counter = 0;

/**
 * The backend the behaviour tests run against: Redis (the test server's URL) by default, or
 * SQLite when HOPPER_TEST_BACKEND=sqlite (the `engine-sqlite` project sets it): a database in
 * the test process's memory, shared by every component of the test (each test has its own prefix),
 * or a temporary database file for a test that runs other processes (`useHopper({ processes: true })`).
 */
export const TEST_BACKEND: 'redis' | 'sqlite' = process.env.HOPPER_TEST_BACKEND === 'sqlite' ? 'sqlite' : 'redis';

/** The connection of the backend under test (see TEST_BACKEND). */
export function testConnection(): string {
  return TEST_BACKEND === 'sqlite' ? 'sqlite::memory:' : inject('redisUrl');
}

/** Options of {@link useHopper}. */
export interface UseHopperOptions {
  /** Every component of the test reads a FakeClock (`env.clock`). */
  fakeClock?: boolean;
  /**
   * The test runs components in other processes (forked workers, producers) on `env.url`. On the
   * SQLite tier each test then gets a database file of its own in a temporary directory (removed
   * after the test), which every process on the machine can open, as a SQLite deployment shares
   * one file; `sqlite::memory:` is private to one process. On Redis it changes nothing.
   */
  processes?: boolean;
}

/**
 * A connection for one test: the tier's (see {@link testConnection}), or on SQLite with
 * `processes` a temporary file database; `dispose` removes that file after the test.
 */
function connectionFor(options: UseHopperOptions): { url: string; dispose: () => void } {
  if (!options.processes || TEST_BACKEND !== 'sqlite') return { url: testConnection(), dispose: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'hopper-test-'));
  return { url: `sqlite:${join(dir, 'hopper.db')}`, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Sets up a fresh environment before each test of the calling file and tears it down after:
 * closes what the test opened, audits invariants, deletes the prefix's keys.
 */
export function useHopper(options: UseHopperOptions = {}): HopperEnv {
  let state: EnvState | undefined;
  const current = (): EnvState => {
    if (!state) throw new Error('useHopper(): the environment exists only inside a test.');
    return state;
  };

  beforeEach(() => {
    const { url, dispose } = connectionFor(options);
    const prefix = `t${randomBytes(4).toString('hex')}`;
    const clock = options.fakeClock ? new FakeClock() : undefined;
    const closables: { close(): Promise<void> }[] = [];
    const errors = new ErrorWatch();
    const track = <T extends { close(): Promise<void> }>(closable: T): T => {
      closables.push(closable);
      return errors.watch(closable, closable.constructor.name);
    };
    const env: HopperEnv = {
      url,
      prefix,
      clock,
      queueName: (hint = 'q') => `${hint}${++counter}`,
      queue: (name, opts) => track(new Queue(name, { connection: url, prefix, clock, ...opts })),
      worker: (name, processor, opts) => track(new Worker(name, processor, { connection: url, prefix, clock, ...opts })),
      events: (name, opts) => track(new QueueEvents(name, { connection: url, prefix, clock, ...opts })),
      flows: () => track(new FlowProducer({ connection: url, prefix, clock })),
      track,
      skipInvariants: () => {
        current().audit = false;
      },
      expectErrors: (matcher = true) => errors.expect(matcher),
      errors: () => errors.errors(),
    };
    state = { env, dispose, closables, audit: true, errors };
  });

  afterEach(async () => {
    const s = current();
    state = undefined;
    // Last opened, first closed (a server a test started outlives the clients using it).
    for (const closable of s.closables.reverse()) await closable.close();
    try {
      if (s.audit) await assertInvariants(s.env.url, s.env.prefix);
    } finally {
      try {
        await deletePrefix(s.env.url, s.env.prefix);
      } finally {
        s.dispose();
      }
    }
    s.errors.check();
  });

  return new Proxy({} as HopperEnv, {
    // The env's members are arrow functions and plain values: nothing depends on `this`.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    get: (_target, key: keyof HopperEnv) => current().env[key],
  });
}
