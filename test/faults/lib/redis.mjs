// A private redis-server for one row: started on a port of the suite's range, killed, frozen,
// restarted on the same data directory. Persistence: 'none', 'always' or 'everysec' (AOF).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The ports this suite may use (others on the machine use 6379 and 7001-7003). */
export const PORTS = { first: 6400, last: 6420 };

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

/** The first port of the range with nothing listening. */
export async function freeSuitePort() {
  for (let port = PORTS.first; port <= PORTS.last; port++) if (!(await portBusy(port))) return port;
  throw new Error(`No free port in ${PORTS.first}-${PORTS.last} for the fault suite's Redis.`);
}

export class RedisProc {
  /** @param {{ persistence?: 'none'|'always'|'everysec', maxmemory?: string }} opts */
  constructor(opts = {}) {
    this.opts = { persistence: 'none', ...opts };
    this.dir = mkdtempSync(join(tmpdir(), 'hopper-faults-redis-'));
    this.child = undefined;
    this.port = 0;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  args() {
    const a = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    if (this.opts.persistence === 'none') a.push('--appendonly', 'no');
    else a.push('--appendonly', 'yes', '--appendfsync', this.opts.persistence);
    if (this.opts.maxmemory) a.push('--maxmemory', this.opts.maxmemory, '--maxmemory-policy', 'noeviction');
    return a;
  }

  /** Starts the server (the first time on a free port of the range, later on the same one). */
  async start() {
    if (!this.port) this.port = await freeSuitePort();
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
  }
}
