// Starts and stops the throwaway redis-server every benchmark run uses.
//
// Both libraries run against the same fresh server with Redis's default settings (`hz` in
// particular is left alone: a queue must behave well on a stock Redis), minus persistence,
// which would add disk I/O noise unrelated to either library.

import { spawn } from 'node:child_process';
import net from 'node:net';
import { connectRedis, readInfoNumbers, parseInfo } from './client.mjs';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const LOG_LINES_KEPT = 30;

/** Asks the kernel for a free loopback port (a small race remains; `startRedis` retries). */
function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** redis-server failed to start; `addressInUse` says whether another port is worth a try. */
class RedisStartError extends Error {
  constructor(message, addressInUse = false) {
    super(message);
    this.name = 'RedisStartError';
    this.addressInUse = addressInUse;
  }
}

/**
 * Spawns a watchdog shell that SIGKILLs `pid` as soon as our end of its stdin pipe closes.
 * Node cannot ask the kernel to kill a child when the parent dies (no PR_SET_PDEATHSIG), so
 * this covers the cases no JavaScript handler sees: the harness being SIGKILLed or crashing
 * hard. It ignores SIGINT so a Ctrl-C reaching the whole process group cannot disarm it.
 */
function spawnWatchdog(pid) {
  const watchdog = spawn('sh', ['-c', `trap '' INT; read _; kill -9 ${pid} 2>/dev/null`], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => {}); // best effort: the normal stop path does not depend on it
  watchdog.unref();
  // An unref'd pipe keeps the harness from hanging on exit; the pipe still closes with us.
  /** @type {import('node:net').Socket} */ (watchdog.stdin).unref();
  return watchdog;
}

/** Spawns redis-server on `port` and resolves once it answers PING. */
async function spawnOnPort(port) {
  const child = spawn(
    'redis-server',
    // No RDB snapshots and no AOF: nothing is written to disk, so no data directory is needed.
    ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Keep the tail of Redis's log for error messages; the pipes must be drained either way.
  /** @type {string[]} */
  const log = [];
  const keep = (chunk) => {
    log.push(...String(chunk).split('\n').filter(Boolean));
    log.splice(0, Math.max(0, log.length - LOG_LINES_KEPT));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);

  /** @type {{ code: number | null, signal: string | null } | undefined} */
  let exited;
  /** @type {NodeJS.ErrnoException | undefined} */
  let spawnError;
  child.on('exit', (code, signal) => (exited = { code, signal }));
  child.on('error', (error) => (spawnError = error));

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (spawnError) {
      const hint = spawnError.code === 'ENOENT' ? ' (is redis-server installed and on PATH?)' : '';
      throw new RedisStartError(`could not start redis-server: ${spawnError.message}${hint}`);
    }
    if (exited) {
      throw new RedisStartError(
        `redis-server exited during startup (code ${exited.code}, signal ${exited.signal}):\n  ${log.join('\n  ')}`,
        log.some((line) => line.includes('Address already in use')),
      );
    }
    try {
      const client = await connectRedis({ host: HOST, port });
      try {
        await client.command('PING');
      } finally {
        client.close();
      }
      return { child, log };
    } catch {
      await sleep(50);
    }
  }
  child.kill('SIGKILL');
  throw new RedisStartError(`redis-server did not answer PING within ${START_TIMEOUT_MS} ms:\n  ${log.join('\n  ')}`);
}

/**
 * Starts a throwaway redis-server on a free loopback port.
 * The returned handle's `stop()` must be called; `killNow()` is the synchronous last resort for
 * `process.on('exit')`, and a watchdog process covers the harness dying without running either.
 */
export async function startRedis() {
  let started;
  for (let attempt = 1; !started; attempt++) {
    const port = await findFreePort();
    try {
      started = { port, ...(await spawnOnPort(port)) };
    } catch (error) {
      // Another process may take the port between our probe and Redis binding it.
      if (!(error instanceof RedisStartError && error.addressInUse) || attempt >= 5) throw error;
    }
  }
  const { child, port } = started;
  const watchdog = spawnWatchdog(child.pid);
  const control = await connectRedis({ host: HOST, port });
  const server = parseInfo(String(await control.command('INFO', 'server')));
  let stopped = false;

  const killNow = () => {
    if (stopped) return;
    stopped = true;
    control.close();
    watchdog.kill('SIGKILL');
    child.kill('SIGKILL');
  };

  return {
    /** Connection options handed to both libraries. */
    connection: { host: HOST, port },
    /** The redis-server pid, whose /proc entry gives its CPU time. */
    pid: child.pid,
    version: server.get('redis_version') ?? 'unknown',
    /** The harness's own connection, for FLUSHALL and INFO between runs. */
    control,
    /** Reads numeric INFO fields (see readInfoNumbers). */
    info: (section, names) => readInfoNumbers(control, section, names),
    /** Fails with Redis's log tail if the server died (a crash must not look like a slow library). */
    assertAlive() {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`redis-server died (code ${child.exitCode}, signal ${child.signalCode}):\n  ${started.log.join('\n  ')}`);
      }
    },
    killNow,
    /** Stops the server gracefully (SIGTERM), escalating to SIGKILL after a timeout. */
    async stop() {
      if (stopped) return;
      const exited = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve(undefined);
        else child.once('exit', resolve);
      });
      control.close();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
      killNow();
    },
  };
}
