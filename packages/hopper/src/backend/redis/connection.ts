/**
 * Turns the `connection` option (ioredis options, a URL, or an existing ioredis client) into
 * clients. A client the user passed in is borrowed: Hopper never closes it. Blocking waits use
 * a duplicate of their own, which Hopper owns and closes.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * How to reach Redis: ioredis options, a `redis://` URL, or an ioredis `Redis`/`Cluster`
 * instance (shared with your app, never closed by Hopper).
 *
 * @example new Queue('mail', { connection: { host: '127.0.0.1', port: 6379 } })
 * @example new Queue('mail', { connection: 'redis://127.0.0.1:6379' })
 * @example new Queue('mail', { connection: new Redis(process.env.REDIS_URL) })
 */
export type ConnectionOptions = RedisOptions | string | Redis | Cluster;

/** A Redis or Cluster client. */
export type RedisClient = Redis | Cluster;

/** What the connection is for; blocking ones never time out a command and keep TCP alive. */
export type ClientRole = 'command' | 'worker' | 'blocking';

function roleOptions(role: ClientRole): RedisOptions {
  if (role === 'command') return {};
  // Workers and blocking waits must ride out reconnects instead of failing commands after
  // ioredis's default 20 retries.
  return role === 'blocking'
    ? { maxRetriesPerRequest: null, keepAlive: 30_000, enableReadyCheck: true }
    : { maxRetriesPerRequest: null, keepAlive: 30_000 };
}

/** A client and whether Hopper owns it (and so must close it). */
export interface ClientHandle {
  client: RedisClient;
  owned: boolean;
}

/** Tells whether a value is an ioredis client. */
export function isRedisClient(value: unknown): value is RedisClient {
  return value instanceof Redis || value instanceof Cluster || isClientLike(value);
}

// Another copy of ioredis (an app's own) makes instances that fail `instanceof`: recognise them by shape.
function isClientLike(value: unknown): value is RedisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { duplicate?: unknown }).duplicate === 'function' &&
    typeof (value as { evalsha?: unknown }).evalsha === 'function' &&
    typeof (value as { status?: unknown }).status === 'string'
  );
}

/** Opens (or borrows) the client for `role`. */
export function openClient(connection: ConnectionOptions | undefined, role: ClientRole): ClientHandle {
  if (isRedisClient(connection)) {
    if (role === 'blocking') return { client: duplicateClient(connection, role), owned: true };
    return { client: connection, owned: false };
  }
  if (typeof connection === 'string') {
    return { client: new Redis(connection, roleOptions(role)), owned: true };
  }
  return { client: new Redis({ ...connection, ...roleOptions(role) }), owned: true };
}

/**
 * A new client to the same server(s) as `client`, for `role`; `name` is its CLIENT SETNAME (set on
 * every connect; a single-node client only).
 */
export function duplicateClient(client: RedisClient, role: ClientRole, name?: string): RedisClient {
  // A single-node client of this or another copy of ioredis (an app's own: instanceof fails) takes the options.
  if (client instanceof Redis || (client as { isCluster?: boolean }).isCluster === false) {
    return (client as Redis).duplicate(name === undefined ? roleOptions(role) : { ...roleOptions(role), connectionName: name });
  }
  return client.duplicate();
}

/** Closes an owned client gracefully (QUIT), falling back to a disconnect. */
export async function closeClient(handle: ClientHandle): Promise<void> {
  if (!handle.owned) return;
  const client = handle.client;
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/**
 * Forwards a client's connection errors to `report`, once per outage: while Redis is down,
 * ioredis emits an error on every reconnect attempt, which would flood the component's `error`
 * event. After the client is ready again, the next error is reported anew.
 */
export function reportErrors(client: RedisClient, report: (err: Error) => void): void {
  let reported = false;
  client.on('error', (err: Error) => {
    if (reported) return;
    reported = true;
    report(err);
  });
  client.on('ready', () => {
    reported = false;
  });
}

/** Tells whether a client is a Redis Cluster client. */
export function isClusterClient(client: RedisClient): boolean {
  return client instanceof Cluster || (client as { isCluster?: boolean }).isCluster === true;
}
