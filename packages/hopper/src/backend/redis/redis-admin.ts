/**
 * Reads across all queues under a prefix: which queues exist (by their meta keys), and a
 * prefix-wide delete for tests and tools.
 */
import type { BackendAdmin } from '../backend.js';
import { closeClient, openClient, type ClientHandle, type ConnectionOptions } from './connection.js';
import { metaKeyPattern } from './keys.js';

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
    connection: ConnectionOptions | undefined,
    private readonly prefix: string,
  ) {
    this.handle = openClient(connection, 'command');
  }

  async listQueues(): Promise<string[]> {
    const meta = metaKeyPattern(this.prefix);
    const names = new Set<string>();
    await scan(this.handle.client, meta.pattern, (keys) => {
      for (const key of keys) {
        const name = meta.nameOf(key);
        if (name !== undefined) names.add(name);
      }
    });
    return [...names].sort();
  }

  async deleteAll(): Promise<number> {
    let deleted = 0;
    const escaped = this.prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
    await scan(this.handle.client, `${escaped}:*`, async (keys) => {
      // One UNLINK per key keeps this working across Redis Cluster slots.
      const results = await Promise.all(keys.map((key) => this.handle.client.unlink(key)));
      deleted += results.reduce((a, b) => a + b, 0);
    });
    return deleted;
  }

  async close(): Promise<void> {
    await closeClient(this.handle);
  }
}
