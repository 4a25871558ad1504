/**
 * The connections of one queue's Redis backend: the command client (borrowed or owned) and
 * lazily opened blocking clients for idle waits and event reads, with connection errors
 * reported once per outage.
 */
import type { ServerInfo } from '../backend.js';
import {
  closeClient,
  duplicateClient,
  openClient,
  reportErrors,
  type ClientHandle,
  type ConnectionOptions,
  type RedisClient,
} from './connection.js';
import { queueKeys, type QueueKeys } from './keys.js';

export interface RedisBackendOptions {
  connection?: ConnectionOptions;
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

  constructor(options: RedisBackendOptions) {
    this.queueName = options.queueName;
    this.keys = queueKeys(options.prefix, options.queueName);
    this.handle = openClient(options.connection, options.role);
    this.client = this.handle.client;
    this.reportError = options.onConnectionError ?? (() => undefined);
    // A client the user passed in reports its errors to the user; ours report to the component.
    if (this.handle.owned) reportErrors(this.client, this.reportError);
  }

  protected blockingClient(name?: string): RedisClient {
    const client = duplicateClient(this.client, 'blocking', name);
    reportErrors(client, this.reportError);
    return client;
  }

  async connect(): Promise<ServerInfo> {
    const info = String(await this.client.call('INFO', ['server']));
    const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? '0.0.0';
    let maxmemoryPolicy: string | undefined;
    try {
      const memory = String(await this.client.call('INFO', ['memory']));
      maxmemoryPolicy = /maxmemory_policy:([^\r\n]+)/.exec(memory)?.[1];
    } catch {
      maxmemoryPolicy = undefined;
    }
    return { version, maxmemoryPolicy };
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    this.interruptWait();
    this.eventsClient?.disconnect();
    this.eventsClient = undefined;
    for (const client of this.outputClients.splice(0)) client.disconnect();
    await closeClient(this.handle);
  }

  disconnect(): void {
    this.subscriber?.disconnect();
    this.interruptWait();
    this.eventsClient?.disconnect();
    for (const client of this.outputClients.splice(0)) client.disconnect();
    if (this.handle.owned) this.client.disconnect();
  }

  onReconnect(listener: () => void): void {
    let seenReady = this.client.status === 'ready';
    this.client.on('ready', () => {
      if (seenReady) listener();
      seenReady = true;
    });
  }

  async waitForWork(timeoutMs: number): Promise<boolean> {
    this.waitClient ??= this.blockingClient();
    const client = this.waitClient;
    try {
      const reply = await client.call('BLPOP', [this.keys.marker, Math.max(timeoutMs, 1) / 1000]);
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
    client?.disconnect();
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
