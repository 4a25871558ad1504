// The processor processes of one row: forked from worker.mjs, supervised (a process that dies is
// replaced, as a process manager would), and the targets of the worker faults. Every fault is
// recorded with the pid it hit, so the checker can tell which duplicates a fault explains.
import { fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('../worker.mjs', import.meta.url));

export class WorkerPool {
  /**
   * @param {object} cfg the worker config passed to worker.mjs (url, prefix, queue, effects, lock settings)
   * @param {{ count: number, respawn?: boolean, onEffect?: (pool, child, id) => void, onOccurrence?: (pool, child, id, attempt) => void,
   *   env?: object }} opts
   *   `env`: more environment for every process (the clock rows preload libfaketime)
   */
  constructor(cfg, opts) {
    this.cfg = cfg;
    this.opts = { respawn: true, ...opts };
    this.children = new Set();
    this.faults = []; // { kind, pid, at, until? }
    this.exits = []; // { pid, code, signal, at }
    this.stopping = false;
  }

  /** Starts `count` processes and waits until each worker is connected. */
  async start() {
    await Promise.all(Array.from({ length: this.opts.count }, () => this.spawn()));
  }

  /**
   * Starts one process; `overrides` change its config (say, its Redis URL), and it is not replaced
   * when it dies. `exec`, a command prefix, runs it through another program (say, `ip netns exec
   * <name>`, which enters a network namespace and executes node in place: same pid, IPC kept).
   */
  spawn(overrides, { exec } = {}) {
    const args = [WORKER, JSON.stringify({ ...this.cfg, ...overrides })];
    const options = {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, HOPPER_FAULTS_EFFECTS: this.cfg.effects, ...this.opts.env },
    };
    const child = exec ? spawn(exec[0], [...exec.slice(1), process.execPath, ...args], options) : fork(args[0], args.slice(1), options);
    this.children.add(child);
    const ready = new Promise((resolve) => {
      child.on('message', (msg) => {
        if (msg?.ready) resolve(child);
        else if (msg?.occurrence !== undefined) this.opts.onOccurrence?.(this, child, msg.occurrence, msg.attempt);
        else if (msg?.effect !== undefined) {
          if (this.opts.onEffect) this.opts.onEffect(this, child, msg.effect, msg.attempt);
          else this.release(child, msg.effect);
        }
      });
      child.once('exit', () => resolve(child));
    });
    child.once('exit', (code, signal) => {
      this.children.delete(child);
      this.exits.push({ pid: child.pid, code, signal, at: Date.now() });
      if (this.opts.respawn && !overrides && !this.stopping) setTimeout(() => !this.stopping && this.spawn(), 200);
    });
    return ready;
  }

  /** Lets a gated job go on to its completion. */
  release(child, id) {
    if (child.connected) child.send({ go: id });
  }

  alive() {
    return [...this.children].filter((c) => c.exitCode === null && c.signalCode === null);
  }

  pick(rand) {
    const alive = this.alive();
    return alive.length ? alive[Math.floor(rand() * alive.length)] : undefined;
  }

  /** Sends `signal` to `child` and records the fault. */
  signal(child, signal, kind = signal) {
    if (!child) return;
    this.faults.push({ kind, pid: child.pid, at: Date.now() });
    child.kill(signal);
  }

  /** SIGSTOP for `ms`, then SIGCONT; resolves after the SIGCONT. */
  async freeze(child, ms) {
    const fault = { kind: 'SIGSTOP', pid: child.pid, at: Date.now() };
    this.faults.push(fault);
    child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, ms));
    child.kill('SIGCONT');
    fault.until = Date.now();
  }

  /** Marks a pid as faulted without a signal (an event-loop block the row caused). */
  note(kind, pid) {
    this.faults.push({ kind, pid, at: Date.now() });
  }

  /** Closes every process gracefully (SIGTERM: worker.close()), killing any still alive after `ms`. */
  async stop(ms = 20_000) {
    this.stopping = true;
    const alive = this.alive();
    await Promise.all(
      alive.map(
        (child) =>
          new Promise((resolve) => {
            const timer = setTimeout(() => child.kill('SIGKILL'), ms);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGCONT');
            child.kill('SIGTERM');
          }),
      ),
    );
  }
}
