/**
 * How long a Redis client has gone without a working connection, and the deadline past which the
 * calls waiting for one stop waiting (docs/limits-and-errors.md, Time bounds).
 *
 * ioredis queues a command sent while it has no connection (its offline queue) and sends it once
 * connected: with the default retries, a producer's call waited ~10 s for a refused port and
 * minutes for a server that accepts connections but never answers (each retry waits for the
 * handshake deadline), and a worker's connection (unlimited retries) waited for ever. So each
 * client Hopper uses is watched: once it has been without a ready connection for its
 * `connectTimeout` (ioredis's option, default 10 s), from its creation or from the moment it lost
 * its connection, it is "unavailable" with a typed error (ConnectionError, or
 * ConnectionTimeoutError when the server accepted connections but did not answer) until a
 * connection is ready again. Public calls check that first and fail at once (QueueBase.ready);
 * a producer's ('command') connection Hopper owns also rejects the commands it holds, then and
 * every second while the outage lasts. A worker's connection keeps its commands: they are fenced
 * and sent again once connected (docs/architecture.md, Reconnects).
 */
import { ConnectionError, ConnectionTimeoutError } from '../../job/errors.js';
import { safeTimeout, type SafeTimer } from '../../clock/timers.js';
import type { Cluster, Redis } from 'ioredis';

type RedisClient = Redis | Cluster;

/** ioredis's default `connectTimeout` (ms), which Hopper also uses as the availability deadline. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** While a producer's connection stays unavailable, how often the commands it holds are rejected (ms). */
const FLUSH_EVERY_MS = 1_000;

/** Errors of a connection attempt that never reached the server. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EACCES', 'ETIMEDOUT']);

interface Availability {
  /** When the client last lost (or has not yet had) a ready connection; undefined while ready. */
  downSince: number | undefined;
  /** The last connection error seen during this outage. */
  lastError: Error | undefined;
  /** A TCP connection was made during this outage (the server accepts connections). */
  connected: boolean;
  /** Set once the outage passed the deadline: the error calls get until a connection is ready. */
  failure: Error | undefined;
  timer: SafeTimer | undefined;
}

/** The parts of ioredis's client this module reaches into (not in its typings). */
interface ClientQueues {
  offlineQueue?: { length: number; shift(): { command: { reject(err: Error): void } } | undefined };
  prevCommandQueue?: { length: number; shift(): { command: { reject(err: Error): void } } | undefined } | null;
}

const watched = new WeakMap<RedisClient, Availability>();

/** The `connectTimeout` of a client (ioredis's option), used as its availability deadline. */
export function connectTimeoutOf(client: RedisClient): number {
  const options = (client as { options?: { connectTimeout?: number; redisOptions?: { connectTimeout?: number } } }).options;
  const value = options?.connectTimeout ?? options?.redisOptions?.connectTimeout;
  return typeof value === 'number' && value > 0 ? value : DEFAULT_CONNECT_TIMEOUT_MS;
}

/** Where a client connects, for messages: `host:port`, a socket path, or a cluster's first node. */
export function describeClient(client: RedisClient): string {
  const options = (client as { options?: { host?: string; port?: number; path?: string } }).options;
  if (options?.path) return options.path;
  if (options?.host !== undefined || options?.port !== undefined) return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
  const nodes = (client as { startupNodes?: { host?: string; port?: number }[] }).startupNodes;
  const first = nodes?.[0];
  return first ? `${first.host ?? 'localhost'}:${first.port ?? 6379} (cluster)` : 'Redis';
}

/**
 * Watches `client`'s connection (once per client). `flush`: reject the commands it holds once
 * unavailable (a producer's connection Hopper owns); otherwise the state only gates public calls.
 */
export function watchAvailability(client: RedisClient, flush: boolean): void {
  if (watched.has(client)) return;
  const state: Availability = { downSince: undefined, lastError: undefined, connected: false, failure: undefined, timer: undefined };
  watched.set(client, state);
  const timeoutMs = connectTimeoutOf(client);
  const where = describeClient(client);
  const expire = (): void => {
    state.timer = undefined;
    if (client.status === 'ready' || client.status === 'end' || state.downSince === undefined) return;
    state.failure ??= unavailableError(state, where, timeoutMs);
    if (flush) {
      rejectHeld(client, state.failure);
      state.timer = safeTimeout(expire, FLUSH_EVERY_MS, { ref: false });
    }
  };
  const down = (): void => {
    if (state.downSince !== undefined || client.status === 'end') return;
    state.downSince = Date.now();
    state.connected = false;
    state.lastError = undefined;
    state.timer = safeTimeout(expire, timeoutMs, { ref: false });
  };
  client.on('error', (err: Error) => {
    state.lastError = err;
  });
  client.on('connect', () => {
    state.connected = true;
  });
  client.on('connecting', down);
  client.on('close', down);
  client.on('reconnecting', down);
  client.on('ready', () => {
    state.timer?.cancel();
    state.timer = undefined;
    state.downSince = undefined;
    state.failure = undefined;
  });
  client.on('end', () => {
    state.timer?.cancel();
    state.timer = undefined;
  });
  // A lazy client ('wait') starts counting when it starts connecting.
  if (client.status !== 'ready' && client.status !== 'wait') down();
}

/** The typed error of a client unavailable past its deadline, else undefined. */
export function unavailable(client: RedisClient): Error | undefined {
  return watched.get(client)?.failure;
}

/**
 * The error of a start or call that waited past the deadline: the client's own when it is known
 * unavailable, else a ConnectionTimeoutError naming `what` and the bound.
 */
export function timeoutError(client: RedisClient, what: string, timeoutMs: number): Error {
  const state = watched.get(client);
  if (state?.failure) return state.failure;
  if (state && state.downSince !== undefined) return unavailableError(state, describeClient(client), timeoutMs);
  return new ConnectionTimeoutError(
    `${what} did not get an answer from Redis at ${describeClient(client)} within ${timeoutMs} ms (connectTimeout). ` +
      'Check that Redis is reachable and not overloaded; Hopper keeps trying.',
  );
}

function unavailableError(state: Availability, where: string, timeoutMs: number): Error {
  const cause = state.lastError;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (!state.connected && (typeof code === 'string' ? UNREACHABLE.has(code) : cause !== undefined)) {
    return new ConnectionError(
      `Cannot reach Redis at ${where}: no connection for ${timeoutMs} ms (connectTimeout); last error: ${cause?.message}. ` +
        'Check that Redis is running there and the connection options (host, port, password, TLS). Hopper keeps trying and recovers by itself.',
      { cause },
    );
  }
  return new ConnectionTimeoutError(
    `Redis at ${where} did not answer for ${timeoutMs} ms (connectTimeout)` +
      (state.connected ? ': it accepts connections but sends no reply' : '') +
      (cause ? `; last error: ${cause.message}` : '') +
      '. Check that a Redis server (not another service) listens there, the TLS setting, and the network (a firewall dropping packets). Hopper keeps trying and recovers by itself.',
    { cause },
  );
}

/**
 * Rejects the commands a producer's client holds for want of a connection: those never sent (its
 * offline queue: nothing was written), and those sent before the connection dropped (kept to be
 * sent again: their outcome is unknown, which their error says).
 */
function rejectHeld(client: RedisClient, failure: Error): void {
  const queues = client as unknown as ClientQueues;
  const offline = queues.offlineQueue;
  if (offline) for (let item = offline.shift(); item; item = offline.shift()) item.command.reject(failure);
  const sent = queues.prevCommandQueue;
  if (sent && sent.length > 0) {
    const unknown = new (failure.constructor as typeof ConnectionError)(
      `${failure.message} A command sent before the connection dropped got no reply: it may have been applied.`,
      { cause: failure },
    );
    for (let item = sent.shift(); item; item = sent.shift()) item.command.reject(unknown);
  }
}
