// The deadlines of the connections Hopper opens (src/backend/redis/connection.ts): a default
// reply deadline (ioredis socketTimeout) that a user's own value replaces, blocking waits' deadlines
// fitted to their block, and a workaround for ioredis's stale socketTimeout timer. The worker-level
// behaviour they give under half-open connections: test/reliability/half-open.test.ts.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  BLOCKING_GRACE_MS,
  DEFAULT_SOCKET_TIMEOUT_MS,
  blockingSocketTimeout,
  closeClient,
  openClient,
} from '../../src/backend/redis/connection.js';
import { CutProxy } from '../helpers/cut-proxy.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('connection deadlines', () => {
  it('a connection reset does not leave a stale reply deadline that drops the next, healthy connection', async () => {
    const proxy = await CutProxy.start(Number(new URL(env.url).port));
    env.track(proxy);
    const handle = openClient({ host: '127.0.0.1', port: proxy.port, socketTimeout: 800 }, 'worker');
    env.track({ close: () => closeClient(handle) });
    const client = handle.client as Redis;
    const errors: string[] = [];
    client.on('error', (err: Error) => errors.push(err.message));
    await client.ping();
    // A reply pending (its deadline armed), then the connection is reset: ioredis reconnects.
    const marker = `half-open-${Math.random()}`;
    const held = proxy.arm(marker);
    const pending = client.call('ECHO', marker);
    await held;
    proxy.cut();
    expect(await pending).toBe(marker); // re-sent on the new connection
    // The new connection keeps answering past the old deadline: it is never dropped for it.
    const until = performance.now() + 1_600;
    let pings = 0;
    while (performance.now() < until) {
      await client.ping();
      pings++;
    }
    expect(pings).toBeGreaterThan(1);
    expect(errors.filter((m) => m.includes('Socket timeout'))).toEqual([]);
  });

  it('default deadlines: 10 s for replies; a blocking wait gets its block time plus a grace, the user value kept when longer', () => {
    const own = openClient({ host: '127.0.0.1', port: 1, lazyConnect: true }, 'worker');
    expect((own.client as Redis).options.socketTimeout).toBe(DEFAULT_SOCKET_TIMEOUT_MS);
    void closeClient(own);
    const users = openClient({ host: '127.0.0.1', port: 1, lazyConnect: true, socketTimeout: 20_000 }, 'command');
    expect((users.client as Redis).options.socketTimeout).toBe(20_000);
    void closeClient(users);
    // A client the user passed in is borrowed as it is.
    const borrowed = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true });
    expect(openClient(borrowed, 'worker')).toEqual({ client: borrowed, owned: false });
    expect(borrowed.options.socketTimeout).toBeUndefined();
    borrowed.disconnect();
    expect(blockingSocketTimeout(5_000, undefined)).toBe(5_000 + BLOCKING_GRACE_MS);
    expect(blockingSocketTimeout(5_000, 6_000)).toBe(5_000 + BLOCKING_GRACE_MS); // raised: 6 s would drop every wait
    expect(blockingSocketTimeout(5_000, 60_000)).toBe(60_000);
    expect(blockingSocketTimeout(0, 6_000)).toBeUndefined(); // a wait without end cannot have a deadline
    expect(blockingSocketTimeout(undefined, undefined)).toBe(DEFAULT_SOCKET_TIMEOUT_MS);
  });
});
