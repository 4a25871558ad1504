/**
 * Raw server-side mischief for the doctor's tests: filling memory past `maxmemory` so keys are
 * evicted, and making Redis refuse a connection at `maxclients`.
 */
import { Redis } from 'ioredis';

/** Writes `count` keys of `size` bytes (past a small maxmemory with an LRU policy, Redis evicts some). */
export async function fillMemory(url: string, count: number, size: number): Promise<void> {
  const raw = new Redis(url);
  try {
    const value = 'x'.repeat(size);
    for (let i = 0; i < count; i++) await raw.set(`filler:${i}`, value);
  } finally {
    raw.disconnect();
  }
}

/** Lowers maxclients to the connections open now, tries one more (refused), then restores it. */
export async function refuseOneConnection(url: string): Promise<void> {
  const raw = new Redis(url);
  try {
    const clients = Number(/connected_clients:(\d+)/.exec(await raw.info('clients'))?.[1]);
    const [, before] = (await raw.config('GET', 'maxclients')) as [string, string];
    await raw.config('SET', 'maxclients', String(clients));
    const extra = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    await extra.connect().catch(() => undefined);
    await extra.ping().catch(() => undefined);
    extra.disconnect();
    await raw.config('SET', 'maxclients', before);
  } finally {
    raw.disconnect();
  }
}
