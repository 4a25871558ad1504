// Where the demo keeps its queues, in this order: REDIS_URL; a Redis on 127.0.0.1:6379; a
// throwaway redis-server (no persistence) when the binary is installed; else the embedded SQLite
// backend (a temporary database file), which needs nothing but Node.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, reachable } from '../lib/redis.mjs';

function hasRedisServer() {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

/**
 * Picks the demo's backend. `redis` (a URL) forces Redis; `sqlite: true` forces SQLite.
 * Returns `{ kind, connection, describe, stop() }`.
 */
export async function chooseBackend({ redis, sqlite = false } = {}) {
  if (!sqlite) {
    const wanted = redis ?? process.env.REDIS_URL;
    if (wanted !== undefined) {
      if (!(await reachable(wanted)))
        throw new Error(`No Redis answers at ${wanted} (from ${redis ? '--redis' : 'REDIS_URL'}): start it, or unset it.`);
      return {
        kind: 'redis',
        connection: wanted,
        describe: `Redis at ${wanted} (${redis ? '--redis' : 'REDIS_URL'})`,
        stop: async () => {},
      };
    }
    const local = 'redis://127.0.0.1:6379';
    if (await reachable(local)) return { kind: 'redis', connection: local, describe: `Redis at ${local}`, stop: async () => {} };
    if (hasRedisServer()) {
      const port = await freePort();
      const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      const url = `redis://127.0.0.1:${port}`;
      for (let i = 0; i < 50 && !(await reachable(url)); i++) await new Promise((r) => setTimeout(r, 100));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      return {
        kind: 'redis',
        connection: url,
        describe: `a throwaway redis-server on port ${port} (no Redis at ${local}; it stops with the demo)`,
        stop: async () => {
          child.kill();
          await exited;
        },
      };
    }
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'hopper-demo-'));
  return {
    kind: 'sqlite',
    connection: `sqlite:${path.join(dir, 'demo.db')}`,
    describe: sqlite
      ? `the embedded SQLite backend (${dir}/demo.db, --sqlite)`
      : `the embedded SQLite backend (${dir}/demo.db): no REDIS_URL, no Redis on 127.0.0.1:6379 and no redis-server installed`,
    stop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
