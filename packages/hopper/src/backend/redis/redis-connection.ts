/**
 * The connections of one queue's Redis backend: the command client (borrowed or owned) and
 * lazily opened blocking clients for idle waits and event reads, with connection errors
 * reported once per outage.
 */
import type { ServerInfo } from '../backend.js';
import {
  blockTime,
  blockingSocketTimeout,
  checkDatabase,
  closeClient,
  disconnectNow,
  dropSocket,
  duplicateClient,
  isClusterClient,
  openClient,
  reportErrors,
  setSocketTimeout,
  userSocketTimeout,
  type ClientHandle,
  type QueueConnection,
  type RedisClient,
} from './connection.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { connectTimeoutOf, describeClient, timeoutError, unavailable } from './availability.js';
import { ConnectionError, hopperErrorCode } from '../../job/errors.js';

/**
 * A server's refusal to serve a start, as a typed error: BUSY (a script or function has run past
 * busy-reply-threshold), LOADING (a restart loading its data), a connection closed or given up; a
 * Hopper error passes through.
 */
function asServerError(err: unknown, where: string): unknown {
  if (hopperErrorCode(err) !== undefined || !(err instanceof Error)) return err;
  const message = err.message.replace(/\.+$/, '');
  let hint = 'Check that Redis is running and reachable there; Hopper keeps trying and recovers by itself.';
  if (message.startsWith('BUSY')) {
    hint =
      'Redis is running a script or function that has run longer than busy-reply-threshold, and answers nothing else until it ends (or SCRIPT KILL / FUNCTION KILL). Hopper keeps trying and recovers by itself.';
  } else if (message.startsWith('LOADING')) {
    hint = 'Redis is loading its data after a restart. Hopper keeps trying and recovers by itself.';
  }
  return new ConnectionError(`Redis at ${where} could not serve: ${message}. ${hint}`, { cause: err });
}

export interface RedisBackendOptions {
  connection?: QueueConnection;
  prefix: string;
  queueName: string;
  /** 'worker' connections ride out reconnects; 'command' is for producers. */
  role: 'command' | 'worker';
  /** Receives connection errors of the clients the backend owns (once per outage). */
  onConnectionError?: (err: Error) => void;
}

export abstract class RedisQueueConnection {
  readonly queueName: string;
  readonly keys: QueueKeys;
  protected readonly handle: ClientHandle;
  protected readonly client: RedisClient;
  protected waitClient: RedisClient | undefined;
  protected eventsClient: RedisClient | undefined;
  /** The blocking connections the output readers of this backend share, one per lane (job.stream). */
  protected outputClients: RedisClient[] = [];
  protected subscriber: RedisClient | undefined;
  protected readonly reportError: (err: Error) => void;
  /** The `socketTimeout` the user set, if any (blocking connections raise it to fit their waits). */
  private readonly userSocketTimeout: number | undefined;
  /** Stops reopening the blocking connections with the command connection (set once one is open). */
  private unwatchReconnects: (() => void) | undefined;

  constructor(options: RedisBackendOptions) {
    this.queueName = options.queueName;
    this.keys = queueKeys(options.prefix, options.queueName);
    this.handle = openClient(options.connection, options.role);
    this.client = this.handle.client;
    this.userSocketTimeout = userSocketTimeout(options.connection);
    this.reportError = options.onConnectionError ?? (() => undefined);
    // A client the user passed in reports its errors to the user; ours report to the component.
    if (this.handle.owned) reportErrors(this.client, this.reportError);
  }

  protected blockingClient(name?: string): RedisClient {
    this.watchReconnects();
    const client = duplicateClient(this.client, 'blocking', name, blockingSocketTimeout(undefined, this.userSocketTimeout));
    reportErrors(client, this.reportError);
    return client;
  }

  /** Fits a blocking connection's reply deadline to a wait of `blockMs` (0: for ever; undefined: no wait). */
  protected fitBlockingDeadline(client: RedisClient, blockMs: number | undefined): void {
    setSocketTimeout(client, blockingSocketTimeout(blockMs, this.userSocketTimeout));
  }

  /**
   * The command connection was reopened (it closed, or went silent past its reply deadline). The
   * blocking connections share its network path, but an idle one is not probed by any deadline
   * (the cancel subscription never awaits a reply; the idle wait's connection may have been
   * unused through the outage) and would be found dead only by the next wait's deadline, or
   * never: reopen the ones that think they are connected. A pending wait returns (the worker
   * claims, then waits on a new connection); the subscription and the events reader reconnect and
   * go on (ioredis subscribes again and re-sends the read).
   */
  private watchReconnects(): void {
    if (this.unwatchReconnects) return;
    let seenReady = this.client.status === 'ready';
    const onReady = (): void => {
      if (seenReady) this.refreshIdleConnections();
      seenReady = true;
    };
    this.client.on('ready', onReady);
    this.unwatchReconnects = () => this.client.off('ready', onReady);
  }

  private refreshIdleConnections(): void {
    if (this.waitClient?.status === 'ready') this.interruptWait();
    if (this.subscriber?.status === 'ready') dropSocket(this.subscriber);
    if (this.eventsClient?.status === 'ready') dropSocket(this.eventsClient);
    for (const client of this.outputClients) if (client.status === 'ready') dropSocket(client);
  }

  get startTimeoutMs(): number {
    return connectTimeoutOf(this.client);
  }

  unavailable(): Error | undefined {
    return unavailable(this.client);
  }

  timeoutError(what: string, ms: number): Error {
    return timeoutError(this.client, what, ms);
  }

  async connect(): Promise<ServerInfo> {
    const failure = unavailable(this.client);
    if (failure) throw failure;
    let info: string;
    try {
      info = String(await this.client.call('INFO', ['server']));
    } catch (err) {
      throw asServerError(err, describeClient(this.client));
    }
    const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? '0.0.0';
    let maxmemoryPolicy: string | undefined;
    try {
      const memory = String(await this.client.call('INFO', ['memory']));
      maxmemoryPolicy = /maxmemory_policy:([^\r\n]+)/.exec(memory)?.[1];
    } catch {
      maxmemoryPolicy = undefined;
    }
    await checkDatabase(this.handle);
    return { version, maxmemoryPolicy };
  }

  async close(): Promise<void> {
    this.unwatchReconnects?.();
    if (this.subscriber) disconnectNow(this.subscriber);
    this.subscriber = undefined;
    this.interruptWait();
    if (this.eventsClient) disconnectNow(this.eventsClient);
    this.eventsClient = undefined;
    for (const client of this.outputClients.splice(0)) disconnectNow(client);
    await closeClient(this.handle);
  }

  disconnect(): void {
    this.unwatchReconnects?.();
    if (this.subscriber) disconnectNow(this.subscriber);
    this.interruptWait();
    if (this.eventsClient) disconnectNow(this.eventsClient);
    for (const client of this.outputClients.splice(0)) disconnectNow(client);
    if (this.handle.owned) disconnectNow(this.client);
  }

  /** The command connection's `CLIENT ID`, read once per connection (a reconnect reads it again). */
  private clientIdOf: Promise<string> | undefined;
  private clientIdWatched = false;

  /**
   * The Redis client id of the command connection, which a worker's heartbeat records (BullMQ's
   * `getWorkers()` reports it as `id`): only for a connection the backend opened itself, so that
   * it names this worker alone (a connection passed in may serve other components); '' then, on
   * Redis Cluster (one id per node), and where `CLIENT ID` is refused or fails.
   */
  protected commandClientId(): Promise<string> {
    if (isClusterClient(this.client) || !this.handle.owned) return Promise.resolve('');
    if (!this.clientIdWatched) {
      this.clientIdWatched = true;
      this.onReconnect(() => (this.clientIdOf = undefined));
    }
    this.clientIdOf ??= this.client.call('CLIENT', ['ID']).then(
      (id) => String(id),
      () => '',
    );
    return this.clientIdOf;
  }

  onReconnect(listener: () => void): void {
    let seenReady = this.client.status === 'ready';
    this.client.on('ready', () => {
      if (seenReady) listener();
      seenReady = true;
    });
  }

  /** The idle wait's connection (opened if needed), its reply deadline fitted to a wait of `timeoutMs`. */
  protected waitConnection(timeoutMs: number): { client: RedisClient; blockMs: number } {
    this.waitClient ??= this.blockingClient();
    const client = this.waitClient;
    const blockMs = blockTime(Math.max(timeoutMs, 1));
    this.fitBlockingDeadline(client, blockMs);
    return { client, blockMs };
  }

  async waitForWork(timeoutMs: number): Promise<boolean> {
    const { client, blockMs } = this.waitConnection(timeoutMs);
    try {
      const reply = await client.call('BLPOP', [this.keys.marker, blockMs / 1000]);
      return reply !== null;
    } catch (err) {
      // An interrupted wait (close, disconnect) is not an error: the caller re-checks its state.
      if (this.waitClient !== client) return false;
      throw err;
    }
  }

  openWaitConnection(): void {
    this.waitClient ??= this.blockingClient();
  }

  interruptWait(): void {
    const client = this.waitClient;
    this.waitClient = undefined;
    // At once: a wait on a half-open connection would never see the close complete.
    if (client) disconnectNow(client);
  }

  /** Subscribes to the queue's cancel channel on a connection of its own (opened once). */
  async onCancel(listener: (jobId: string) => void): Promise<void> {
    if (!this.subscriber) {
      this.subscriber = this.blockingClient();
      this.subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.keys.cancelChannel) listener(message);
      });
    }
    await this.subscriber.subscribe(this.keys.cancelChannel);
  }
}
