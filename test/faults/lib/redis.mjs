// A private redis-server for one row: started on a port of the suite's range, killed, frozen,
// restarted on the same data directory. Persistence: 'none', 'always' or 'everysec' (AOF).
// Sentinel and Cluster rows start several of these (lib/sentinel.mjs, lib/cluster.mjs) on ranges
// of their own.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The ports this suite may use (others on the machine use 6379 and 7001-7003). */
export const PORTS = { first: 6400, last: 6420 };
/** Sentinel rows: their Redis servers, and their sentinels. */
export const SENTINEL_REDIS_PORTS = { first: 6381, last: 6392 };
export const SENTINEL_PORTS = { first: 26801, last: 26830 };
/** Cluster rows: six nodes (their bus ports are these plus 10000). */
export const CLUSTER_PORTS = { first: 6430, last: 6459 };

function portBusy(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Ports handed out and not yet released: rows run side by side (`--jobs`) never share one. */
const claimed = new Set();

/**
 * The first port of the range with nothing listening and not handed out to another row (and, for
 * cluster nodes, a free bus port). The port stays claimed until `releaseSuitePort`.
 */
export async function freeSuitePort(range = PORTS, bus = false) {
  for (let port = range.first; port <= range.last; port++) {
    if (claimed.has(port)) continue;
    claimed.add(port);
    if (!(await portBusy(port)) && !(bus && (await portBusy(port + 10_000)))) return port;
    claimed.delete(port);
  }
  throw new Error(`No free port in ${range.first}-${range.last} for the fault suite's Redis.`);
}

/** Gives a port from `freeSuitePort` back (its server is gone for good). */
export function releaseSuitePort(port) {
  claimed.delete(port);
}

/** Sends one command (inline) to a server and resolves with its reply line, or rejects. */
export function rawCommand(port, command, timeoutMs = 1_000) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${command}: no reply from port ${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      out += chunk.toString();
      if (out.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(out.split('\r\n')[0]);
      }
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Waits until the server on `port` answers PING (a sentinel, or a node still loading). */
export async function waitForPing(port, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await rawCommand(port, 'PING').catch((err) => String(err?.message ?? err));
    if (reply === '+PONG') return;
    if (Date.now() > deadline) throw new Error(`port ${port} did not answer PING within ${timeoutMs} ms (last: ${reply})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export class RedisProc {
  /**
   * @param {{ persistence?: 'none'|'always'|'everysec', maxmemory?: string, ports?: {first: number, last: number},
   *   extra?: string[], bus?: boolean }} opts `extra`: more server arguments; `bus`: a cluster node (its bus port must be free too)
   */
  constructor(opts = {}) {
    this.opts = { persistence: 'none', ports: PORTS, extra: [], ...opts };
    this.dir = mkdtempSync(join(tmpdir(), 'hopper-faults-redis-'));
    this.child = undefined;
    this.port = 0;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** What worker.mjs and the producer connect with (lib/connect.mjs): the URL. */
  get connection() {
    return this.url;
  }

  get alive() {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  args() {
    const a = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    if (this.opts.persistence === 'none') a.push('--appendonly', 'no');
    else a.push('--appendonly', 'yes', '--appendfsync', this.opts.persistence);
    if (this.opts.maxmemory) a.push('--maxmemory', this.opts.maxmemory, '--maxmemory-policy', 'noeviction');
    a.push(...this.opts.extra);
    return a;
  }

  /** Starts the server (the first time on a free port of the range, later on the same one). */
  async start() {
    if (!this.port) this.port = await freeSuitePort(this.opts.ports, this.opts.bus);
    const child = spawn('redis-server', this.args(), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    await new Promise((resolve, reject) => {
      let out = '';
      const onData = (chunk) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) {
          child.stdout.off('data', onData);
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${out}`)));
    });
    child.stdout.resume();
    child.stderr.resume();
    child.removeAllListeners('exit');
  }

  /** SIGKILL: the server dies at once, losing whatever it had not written to disk. */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  freeze() {
    this.child?.kill('SIGSTOP');
  }

  thaw() {
    this.child?.kill('SIGCONT');
  }

  /** Kills the server and removes its data directory. */
  async stop() {
    this.thaw();
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
    if (this.port) releaseSuitePort(this.port);
  }
}
