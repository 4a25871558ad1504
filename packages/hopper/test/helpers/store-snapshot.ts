/**
 * A snapshot of everything a backend stores under a test's prefix, to check that a refused call
 * wrote nothing: on Redis every key under the prefix with its DUMP; on SQLite (a database file)
 * every row of every table. Worker heartbeats are left out (they are refreshed on a timer, not by
 * the call under test).
 */
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';

/** Takes snapshots of the store behind `url` (a Redis URL, or `sqlite:<file>`) under `prefix`. */
export function storeSnapshots(url: string, prefix: string): { take(): Promise<string>; close(): Promise<void> } {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true, fileMustExist: false });
    return {
      take: async () => {
        const tables = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%worker%' ORDER BY name")
          .all() as {
          name: string;
        }[];
        const parts: string[] = [];
        for (const { name } of tables) {
          const rows = db.prepare(`SELECT * FROM "${name}"`).all();
          parts.push(`${name}:${JSON.stringify(rows.map((row) => JSON.stringify(row)).sort())}`);
        }
        return parts.join('\n');
      },
      close: async () => {
        db.close();
      },
    };
  }
  const redis = new Redis(url);
  return {
    take: async () => {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
      const kept = keys.filter((key) => !/:(workers|worker-info)$/.test(key)).sort();
      // Each value in a readable form (a diff names what changed), independent of its encoding.
      const values = await Promise.all(kept.map((key) => readKey(redis, key)));
      return kept.map((key, i) => `${key}=${values[i]}`).join('\n');
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

async function readKey(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  switch (type) {
    case 'string':
      return JSON.stringify(await redis.get(key));
    case 'hash': {
      const h = await redis.hgetall(key);
      return JSON.stringify(
        Object.keys(h)
          .sort()
          .map((f) => [f, h[f]]),
      );
    }
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify((await redis.smembers(key)).sort());
    case 'zset':
      return JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return type;
  }
}
