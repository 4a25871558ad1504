/**
 * Starts and stops private `redis-server` processes for tests: the shared one for a run, and
 * dedicated ones for tests that change server settings, restart the server or kill it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerHandle {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Finds a TCP port that is free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts `redis-server` on a free loopback port with no persistence.
 * Extra arguments are passed through (e.g. `['--appendonly', 'yes']`). `onPort`: that port instead
 * (a test that starts Redis where its clients already try to connect).
 */
export async function startRedisServer(extraArgs: string[] = [], onPort?: number): Promise<RedisServerHandle> {
  const port = onPort ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'hopper-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs];
  let child: ChildProcess;
  try {
    child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw noRedisError(err);
  }
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('error', (err) => reject(noRedisError(err)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code} before it was ready:\n${output}`)));
  });
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function noRedisError(cause: unknown): Error {
  return new Error(
    'The tests need a real Redis 7+. Set REDIS_URL=redis://host:port to use one, or install redis-server ' +
      '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) so the tests can start a throwaway one.',
    { cause },
  );
}
