// One-off admin commands to a suite server (INFO, SENTINEL, CLUSTER, MIGRATE): a short-lived
// ioredis client that never retries, so a dead server is an error, not a wait.
import { Redis } from 'ioredis';

export async function admin(port, ...args) {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2_000,
    commandTimeout: 10_000,
    enableReadyCheck: false,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(...args);
  } finally {
    client.disconnect();
  }
}

/** `INFO section` as an object of its fields. */
export async function info(port, section) {
  const text = String(await admin(port, 'INFO', section));
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

/** Polls `check()` (true when done) every 100 ms until `timeoutMs`; throws `what` on timeout. */
export async function until(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what} (not within ${timeoutMs} ms${last ? `; last error: ${last.message}` : ''})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
