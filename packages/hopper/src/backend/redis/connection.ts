/**
 * Turns the `connection` option (ioredis options, a URL, or an existing ioredis client) into
 * clients. A client the user passed in is borrowed: Hopper never closes it. Blocking waits use
 * a duplicate of their own, which Hopper owns and closes.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { MAX_TIMER_MS } from '../../clock/timers.js';
import { ClosedError, ConnectionError, hopperErrorCode, InvalidOptionsError } from '../../job/errors.js';
import { describeClient, watchAvailability } from './availability.js';

/** ioredis's connection options (BullMQ's `RedisOptions`). */
export type { RedisOptions };

/**
 * BullMQ's `ConnectionOptions`: ioredis options or an ioredis `Redis`/`Cluster` instance (shared
 * with your app, never closed by Hopper). The `connection` option also takes a URL: see
 * {@link QueueConnection}. A function typed on BullMQ's `ConnectionOptions` takes this type.
 *
 * @example new Queue('mail', { connection: { host: '127.0.0.1', port: 6379 } })
 * @example new Queue('mail', { connection: new Redis(process.env.REDIS_URL) })
 */
export type ConnectionOptions = RedisOptions | Redis | Cluster;

/**
 * What the `connection` option of every Hopper component takes: {@link ConnectionOptions}, or a
 * URL: `redis://` / `rediss://` for Redis, `sqlite:<path>` or `sqlite::memory:` for SQLite.
 *
 * @example new Queue('mail', { connection: 'redis://127.0.0.1:6379' })
 * @example new Queue('mail', { connection: 'sqlite:./jobs.db' })
 */
export type QueueConnection = ConnectionOptions | string;

/** A Redis or Cluster client. */
export type RedisClient = Redis | Cluster;

/** What the connection is for; blocking ones keep TCP alive and their deadline follows their waits. */
export type ClientRole = 'command' | 'worker' | 'blocking';

/**
 * The reply deadline of the connections Hopper opens, when `connection` sets no `socketTimeout`
 * (ioredis's option): a connection that awaits a reply and receives nothing for this long is
 * taken for dead (a half-open connection: a NAT or firewall that forgot it, a peer that vanished
 * without closing it), dropped and reopened, and its pending commands are sent again (Hopper's
 * writes are idempotent and fenced). Without it such a connection waits for ever: ioredis has no
 * deadline by default, and TCP keepalive only probes idle connections, for minutes.
 */
export const DEFAULT_SOCKET_TIMEOUT_MS = 10_000;

/**
 * What a blocking wait (`BLPOP` for idle workers, `XREAD BLOCK` for QueueEvents) may take beyond
 * its block time before its connection is taken for dead.
 */
export const BLOCKING_GRACE_MS = 5_000;

/**
 * The longest single block of a blocking wait (ms): its connection's reply deadline, the block
 * plus {@link BLOCKING_GRACE_MS}, must fit one Node timer (2^31-1 ms; ioredis arms a plain
 * `setTimeout`, which would fire at once past that). A longer wait (a `drainDelay` or
 * `blockingTimeout` of a month, or Infinity) blocks this long, then its caller waits again.
 */
export const MAX_BLOCK_MS = MAX_TIMER_MS - BLOCKING_GRACE_MS;

/** A wait's block time as Redis gets it: at least 1 ms, at most {@link MAX_BLOCK_MS} (0 stays 0: for ever). */
export function blockTime(timeoutMs: number): number {
  if (timeoutMs === 0) return 0;
  return Math.min(Math.max(timeoutMs, 1), MAX_BLOCK_MS);
}

/**
 * How long a new connection's set-up (the commands ioredis sends once TCP is connected: client
 * name and info, the ready check) may go without any reply before the connection is dropped and
 * tried again (at most its `socketTimeout`). A healthy Redis answers them in milliseconds; a
 * reconnect made while the network is still cut would otherwise wait out a whole reply deadline
 * after the network heals.
 */
export const HANDSHAKE_TIMEOUT_MS = 3_000;

/**
 * The reply deadline of a blocking connection whose longest wait is `blockMs` (undefined: none
 * yet; 0: for ever), given the `socketTimeout` the user set (if any): the user's, raised to the
 * block time plus {@link BLOCKING_GRACE_MS} (a shorter one would drop every wait); none for a
 * wait without end.
 */
export function blockingSocketTimeout(blockMs: number | undefined, userTimeout: number | undefined): number | undefined {
  if (blockMs === undefined) return userTimeout ?? DEFAULT_SOCKET_TIMEOUT_MS;
  if (blockMs === 0) return undefined;
  // Within one Node timer (ioredis's reply deadline is a plain setTimeout): see MAX_BLOCK_MS.
  return Math.min(Math.max(blockTime(blockMs) + BLOCKING_GRACE_MS, userTimeout ?? 0), MAX_TIMER_MS);
}

/** The `socketTimeout` the user set on `connection` (options or a client), if any. */
export function userSocketTimeout(connection: QueueConnection | undefined): number | undefined {
  if (connection === undefined || typeof connection === 'string') return undefined;
  if (isRedisClient(connection)) {
    const options = (connection as { options?: RedisOptions & { redisOptions?: RedisOptions } }).options;
    return options?.socketTimeout ?? options?.redisOptions?.socketTimeout;
  }
  return connection.socketTimeout;
}

function roleOptions(role: ClientRole, socketTimeout: number | undefined): RedisOptions {
  if (role === 'command') return { socketTimeout };
  // Workers and blocking waits must ride out reconnects instead of failing commands after
  // ioredis's default 20 retries.
  return role === 'blocking'
    ? { maxRetriesPerRequest: null, keepAlive: 30_000, enableReadyCheck: true, socketTimeout }
    : { maxRetriesPerRequest: null, keepAlive: 30_000, socketTimeout };
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
export function openClient(connection: QueueConnection | undefined, role: ClientRole): ClientHandle {
  if (isRedisClient(connection)) {
    if (role === 'blocking') return { client: duplicateClient(connection, role), owned: true };
    // A client you pass keeps its own behaviour; Hopper's calls only check it is available.
    watchAvailability(connection, false);
    return { client: connection, owned: false };
  }
  // The user's socketTimeout is kept; without one, Hopper's reply deadline applies.
  const socketTimeout = userSocketTimeout(connection) ?? DEFAULT_SOCKET_TIMEOUT_MS;
  const client =
    typeof connection === 'string'
      ? new Redis(connection, roleOptions(role, socketTimeout))
      : new Redis({ ...connection, ...roleOptions(role, socketTimeout) });
  // A producer's commands stop waiting once the connection has been down past connectTimeout; a
  // worker's wait to be sent again (availability.ts).
  if (role !== 'blocking') watchAvailability(client, role === 'command');
  return { client: watchSocketTimeout(client), owned: true };
}

/**
 * A new client to the same server(s) as `client`, for `role`; `name` is its CLIENT SETNAME (set on
 * every connect; a single-node client only); `socketTimeout` its reply deadline (a single-node
 * client only; default: `client`'s).
 */
export function duplicateClient(client: RedisClient, role: ClientRole, name?: string, socketTimeout?: number): RedisClient {
  // A single-node client of this or another copy of ioredis (an app's own: instanceof fails) takes the options.
  if (isSingleNode(client)) {
    const options = roleOptions(role, socketTimeout ?? (client as Redis).options.socketTimeout);
    return watchSocketTimeout((client as Redis).duplicate(name === undefined ? options : { ...options, connectionName: name }));
  }
  return client.duplicate();
}

function isSingleNode(client: RedisClient): boolean {
  return client instanceof Redis || (client as { isCluster?: boolean }).isCluster === false;
}

/**
 * Deadlines of a client Hopper owns, beyond ioredis's `socketTimeout`: a connection's set-up is
 * bounded by {@link HANDSHAKE_TIMEOUT_MS}; and, working around an ioredis 5 behaviour, the
 * `socketTimeout` timer armed on a connection that then closed for another reason (a reset),
 * which stays armed and would later drop the next, healthy connection, is cleared at the close.
 */
function watchSocketTimeout(client: Redis): Redis {
  let handshake: ReturnType<typeof setTimeout> | undefined;
  const endHandshake = (): void => {
    clearTimeout(handshake);
    handshake = undefined;
  };
  client.on('connect', () => {
    endHandshake();
    const stream = client.stream;
    const limit = Math.min(HANDSHAKE_TIMEOUT_MS, client.options.socketTimeout ?? Infinity);
    handshake = setTimeout(() => {
      handshake = undefined;
      if (client.status === 'connect' && client.stream === stream) dropSocket(client);
    }, limit);
    handshake.unref();
    // Any reply proves the path works (a Redis still loading its data answers the ready check, and
    // ioredis waits for it to finish): only a silent set-up is cut short.
    stream?.once('data', endHandshake);
  });
  client.on('ready', endHandshake);
  client.on('close', () => {
    endHandshake();
    const state = client as unknown as { socketTimeoutTimer?: ReturnType<typeof setTimeout> };
    if (state.socketTimeoutTimer === undefined) return;
    clearTimeout(state.socketTimeoutTimer);
    state.socketTimeoutTimer = undefined;
  });
  return client;
}

/**
 * Sets the reply deadline of an owned single-node client (read by ioredis at each command):
 * a blocking connection's deadline follows its wait's block time.
 */
export function setSocketTimeout(client: RedisClient, socketTimeout: number | undefined): void {
  if (!isSingleNode(client)) return;
  const options = (client as Redis).options;
  if (options.socketTimeout !== socketTimeout) options.socketTimeout = socketTimeout;
}

/**
 * Drops a single-node client's socket at once, without waiting for the peer (a half-open
 * connection never answers a FIN): ioredis then reconnects (unless the client was disconnected
 * on purpose) and sends its pending commands again.
 */
export function dropSocket(client: RedisClient): void {
  if (!isSingleNode(client)) return;
  (client as Redis).stream?.destroy();
}

/** Closes a client at once, for good: its pending commands fail, even on a half-open connection. */
export function disconnectNow(client: RedisClient): void {
  const reconnecting = client.status === 'reconnecting';
  // ioredis's disconnect() arms a ref'd timer (disconnectTimeout, 2 s) that only the socket's next
  // 'close' clears: on a socket already closed (a refused or dropped connection) it held the
  // process 2 s after close(). This disconnect is for good and destroys the socket itself (below).
  const connector = (client as unknown as { connector?: { disconnectTimeout?: number } }).connector;
  if (connector && typeof connector.disconnectTimeout === 'number') connector.disconnectTimeout = 0;
  client.disconnect();
  dropSocket(client);
  // ioredis 5 leaves a client disconnected between two reconnect attempts 'reconnecting' for
  // ever, holding its queued commands unsettled (no socket is left to close): end it as its close
  // handler would, so those commands fail and whatever awaits them (a start, a close) settles.
  if (reconnecting && isSingleNode(client) && client.status === 'reconnecting') {
    const internals = client as unknown as { setStatus?(status: string): void; flushQueue?(error: Error): void };
    internals.setStatus?.('end');
    internals.flushQueue?.(new ClosedError('The connection was closed.'));
  }
}

/** Closes an owned client gracefully (QUIT), falling back to a disconnect. */
export async function closeClient(handle: ClientHandle): Promise<void> {
  if (!handle.owned) return;
  const client = handle.client;
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    disconnectNow(client);
    return;
  }
  try {
    await client.quit();
  } catch {
    disconnectNow(client);
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
    // Typed, naming the server (ioredis's own error is the cause).
    report(
      hopperErrorCode(err) !== undefined
        ? err
        : new ConnectionError(`Redis connection to ${describeClient(client)}: ${err.message}`, { cause: err }),
    );
  });
  client.on('ready', () => {
    reported = false;
  });
}

/**
 * A database index the server does not have (`db: 99`, `redis://host/99`) makes ioredis's SELECT
 * fail at connect, after which it goes on in database 0 (another app's data). Selecting it again
 * turns that into an InvalidOptionsError. Only for an owned single-node client with a db > 0.
 */
export async function checkDatabase(handle: ClientHandle): Promise<void> {
  const db = handle.owned ? (handle.client as { options?: { db?: unknown } }).options?.db : undefined;
  if (typeof db !== 'number' || db === 0 || isClusterClient(handle.client)) return;
  try {
    await handle.client.call('SELECT', [String(db)]);
  } catch (err) {
    throw new InvalidOptionsError(
      `connection.db must be a database this Redis server has, got ${db}: ${err instanceof Error ? err.message : String(err)}. ` +
        "Use an index below the server's `databases` setting (16 by default), or raise it.",
      { cause: err },
    );
  }
}

/** Tells whether a client is a Redis Cluster client. */
export function isClusterClient(client: RedisClient): boolean {
  return client instanceof Cluster || (client as { isCluster?: boolean }).isCluster === true;
}
