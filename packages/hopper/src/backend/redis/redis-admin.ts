/**
 * Reads across all queues under a prefix: which queues exist (by their meta keys), and a
 * prefix-wide delete for tests and tools.
 */
import type { BackendAdmin, ServerFacts } from '../backend.js';
import { checkDatabase, closeClient, openClient, type ClientHandle, type QueueConnection } from './connection.js';
import { auditLogKey, metaKeyPattern, parseMetaKey } from './keys.js';

async function scan(client: ClientHandle['client'], pattern: string, onKeys: (keys: string[]) => Promise<void> | void): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = (await client.call('SCAN', [cursor, 'MATCH', pattern, 'COUNT', 1000])) as [string, string[]];
    cursor = next;
    if (keys.length > 0) await onKeys(keys);
  } while (cursor !== '0');
}

export class RedisAdmin implements BackendAdmin {
  private readonly handle: ClientHandle;

  constructor(
    connection: QueueConnection | undefined,
    private readonly prefix: string,
  ) {
    this.handle = openClient(connection, 'command');
  }

  private dbChecked: Promise<void> | undefined;

  /** The client, once its database is known to exist (a `db` the server lacks is refused, not read as db 0). */
  private async client(): Promise<ClientHandle['client']> {
    this.dbChecked ??= checkDatabase(this.handle);
    await this.dbChecked;
    return this.handle.client;
  }

  async listQueues(): Promise<string[]> {
    const meta = metaKeyPattern(this.prefix);
    const names = new Set<string>();
    await scan(await this.client(), meta.pattern, (keys) => {
      for (const key of keys) {
        const name = meta.nameOf(key);
        if (name !== undefined) names.add(name);
      }
    });
    return [...names].sort();
  }

  async listPrefixes(): Promise<{ prefix: string; queues: number }[]> {
    const byPrefix = new Map<string, string[]>();
    await scan(this.handle.client, '*:meta', (keys) => {
      for (const key of keys) {
        const parsed = parseMetaKey(key);
        if (parsed) (byPrefix.get(parsed.prefix) ?? byPrefix.set(parsed.prefix, []).get(parsed.prefix)!).push(key);
      }
    });
    const out: { prefix: string; queues: number }[] = [];
    for (const [prefix, keys] of byPrefix) {
      // A Hopper queue's meta hash has an epoch (initQueue); another library's meta key does not.
      if ((await this.handle.client.hexists(keys[0], 'epoch')) === 1) out.push({ prefix, queues: keys.length });
    }
    return out.sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
  }

  async appendAudit(entry: string, max: number): Promise<void> {
    const key = auditLogKey(this.prefix);
    const client = await this.client();
    await client
      .multi()
      .lpush(key, entry)
      .ltrim(key, 0, max - 1)
      .exec();
  }

  async readAudit(count: number): Promise<string[]> {
    return (await this.client()).lrange(auditLogKey(this.prefix), 0, count - 1);
  }

  async serverInfo(): Promise<string> {
    return String(await (await this.client()).info());
  }

  async serverFacts(): Promise<ServerFacts> {
    const client = await this.client();
    const info = new Map<string, string>();
    for (const line of String(await client.info()).split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith('#')) info.set(line.slice(0, colon), line.slice(colon + 1));
    }
    const num = (name: string): number | undefined => (info.has(name) ? Number(info.get(name)) : undefined);
    // CONFIG is often disabled on managed Redis: then what INFO tells is all there is.
    const config = async (name: string): Promise<string | undefined> => {
      try {
        const reply = (await client.call('CONFIG', 'GET', name)) as string[];
        return reply[1];
      } catch {
        return undefined;
      }
    };
    const [appendfsync, save] = await Promise.all([config('appendfsync'), config('save')]);
    let slowlog: ServerFacts['slowlog'] = [];
    try {
      const entries = (await client.call('SLOWLOG', 'GET', '32')) as [number, number, number, string[]][];
      slowlog = entries.map((e) => ({ command: String(e[3]?.[0] ?? '').toLowerCase(), micros: Number(e[2]), at: Number(e[1]) }));
    } catch {
      slowlog = [];
    }
    const aofEnabled = info.get('aof_enabled');
    const [sec, micro] = await client.time();
    return {
      version: info.get('redis_version') ?? 'unknown',
      now: Number(sec) * 1000 + Math.floor(Number(micro) / 1000),
      maxmemoryPolicy: info.get('maxmemory_policy') ?? (await config('maxmemory-policy')),
      maxmemory: num('maxmemory'),
      usedMemory: num('used_memory'),
      aof: aofEnabled === undefined ? undefined : aofEnabled === '1',
      appendfsync,
      rdb: save === undefined ? undefined : save.trim() !== '',
      evictedKeys: num('evicted_keys'),
      rejectedConnections: num('rejected_connections'),
      slowlog,
    };
  }

  async deleteAll(): Promise<number> {
    let deleted = 0;
    const escaped = this.prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
    const client = await this.client();
    await scan(client, `${escaped}:*`, async (keys) => {
      // One UNLINK per key keeps this working across Redis Cluster slots.
      const results = await Promise.all(keys.map((key) => client.unlink(key)));
      deleted += results.reduce((a, b) => a + b, 0);
    });
    return deleted;
  }

  async close(): Promise<void> {
    await closeClient(this.handle);
  }
}
