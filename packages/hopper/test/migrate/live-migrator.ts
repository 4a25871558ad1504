/**
 * The migrating process of the live switch: `hopper migrate --follow` in a child process
 * (test/fixtures/migrator.mjs, on the built package), which the test may SIGKILL at a moment of
 * its choosing and start again. A restart meets the killed run's lock until it expires, as an
 * operator would: it is refused ('locked'), waits the lock's remaining time, and tries again.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type { MigratedState, MigrationReport } from '../../src/migrate/index.js';

const MIGRATOR = fileURLToPath(new URL('../fixtures/migrator.mjs', import.meta.url));

interface Message {
  moved?: number;
  state?: MigratedState;
  pass?: boolean;
  report?: MigrationReport;
  error?: string;
  reason?: string;
}

/** One migrating process. */
export class MigratorProcess {
  readonly child: ChildProcess;
  /** Batches reported moved, and jobs per state. */
  batches = 0;
  readonly moved: Partial<Record<MigratedState, number>> = {};
  /** Passes ended (the bridge waits on BullMQ's events after each). */
  passes = 0;
  report?: MigrationReport;
  error?: string;
  reason?: string;
  killed = false;
  readonly exited: Promise<void>;
  private listeners: (() => void)[] = [];

  constructor(args: string[]) {
    this.child = fork(MIGRATOR, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.child.on('message', (m: Message) => {
      if (m.moved !== undefined && m.state) {
        this.batches++;
        this.moved[m.state] = (this.moved[m.state] ?? 0) + m.moved;
      }
      if (m.pass) this.passes++;
      if (m.report) this.report = m.report;
      if (m.error) {
        this.error = m.error;
        this.reason = m.reason;
      }
      for (const l of this.listeners) l();
    });
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('exit', () => {
        for (const l of this.listeners) l();
        resolve();
      });
    });
  }

  /** Resolves once `check` holds (after a message) or the process has exited. */
  when(check: (p: MigratorProcess) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const listener = () => {
        if (check(this) || this.child.exitCode !== null || this.child.signalCode !== null) {
          this.listeners = this.listeners.filter((l) => l !== listener);
          resolve();
        }
      };
      this.listeners.push(listener);
      listener();
    });
  }

  /** SIGKILLs it and waits for its end. */
  async kill(): Promise<void> {
    this.killed = this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Asks the bridge to stop (as Ctrl-C would) and waits for its report. */
  async stop(): Promise<void> {
    if (this.child.connected) this.child.send('stop');
    await this.exited;
  }
}

/** Starts, kills and restarts the migrating process; sums what its runs reported. */
export class Migrator {
  readonly runs: MigratorProcess[] = [];
  /** Restarts refused because the killed run's lock was still held. */
  refusedWhileLocked = 0;

  constructor(
    private readonly args: string[],
    private readonly conn: Redis,
    private readonly lockKey: string,
  ) {}

  /** Starts a run; while the lock of a killed run is held, waits its remaining time and retries. */
  async start(): Promise<MigratorProcess> {
    for (;;) {
      const run = new MigratorProcess(this.args);
      // Started, or refused at once: the refusal is the process's only message before it exits.
      await run.when((p) => p.error !== undefined || p.batches > 0 || p.passes > 0);
      if (run.reason !== 'locked') {
        this.runs.push(run);
        return run;
      }
      await run.exited;
      this.refusedWhileLocked++;
      const pttl = await this.conn.pttl(this.lockKey);
      await new Promise((resolve) => setTimeout(resolve, Math.max(pttl, 0) + 20));
    }
  }

  /** Jobs moved per state, summed over every run (a killed run's last batch may be missing). */
  moved(): Record<string, number> {
    const total: Record<string, number> = {};
    for (const run of this.runs) for (const [s, n] of Object.entries(run.moved)) total[s] = (total[s] ?? 0) + n;
    return total;
  }
}
