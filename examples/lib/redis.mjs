// Shared by the examples: find a Redis (REDIS_URL, then 127.0.0.1:6379), or start a throwaway
// redis-server without persistence when none answers.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** Whether a Redis answers PING at `url` (within 2 s). */
export async function reachable(url) {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** A TCP port free on 127.0.0.1 now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** A Redis URL to use: REDIS_URL, a Redis on 127.0.0.1:6379, or a throwaway redis-server (stop() ends it). */
export async function redisUrl() {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await reachable(url)) return { url, stop: () => {} };
  const port = await freePort();
  console.log(`No Redis at ${url}: starting a throwaway redis-server on port ${port}.`);
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  child.on('error', () => {
    console.error('Could not start redis-server: install Redis 7+ or set REDIS_URL.');
    process.exit(1);
  });
  const started = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50 && !(await reachable(started)); i++) await new Promise((r) => setTimeout(r, 100));
  return { url: started, stop: () => child.kill() };
}
