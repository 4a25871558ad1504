/**
 * State an earlier version of Hopper left in the store, written directly (a test of the current
 * version reading it): on Redis under the queue's keys, on SQLite (a database file) in its rows.
 */
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';

/**
 * Renames job scheduler `schedulerId`'s pending run (a delayed job) from `from` to `to` in the
 * store behind `url` (a Redis URL, or `sqlite:<file>`), as an earlier version named it. Throws
 * when the run is not there.
 */
export async function renamePendingRun(
  url: string,
  prefix: string,
  queue: string,
  schedulerId: string,
  from: string,
  to: string,
): Promise<void> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { timeout: 10_000 });
    try {
      db.transaction(() => {
        const row = db.prepare('SELECT qid FROM queues WHERE prefix = ? AND name = ?').get(prefix, queue) as { qid: number } | undefined;
        if (!row) throw new Error(`renamePendingRun: no queue ${queue} under ${prefix}`);
        const scheduler = db
          .prepare('UPDATE schedulers SET pid = ? WHERE qid = ? AND id = ? AND pid = ?')
          .run(to, row.qid, schedulerId, from);
        const job = db.prepare("UPDATE jobs SET id = ? WHERE qid = ? AND id = ? AND state = 'delayed'").run(to, row.qid, from);
        if (scheduler.changes !== 1 || job.changes !== 1)
          throw new Error(`renamePendingRun: ${from} is not ${schedulerId}'s delayed pending run`);
      })();
    } finally {
      db.close();
    }
    return;
  }
  const redis = new Redis(url);
  try {
    const base = `${prefix}:{${queue}}:`;
    const due = await redis.zscore(`${base}delayed`, from);
    if (due === null || (await redis.hget(`${base}s:${schedulerId}`, 'pid')) !== from) {
      throw new Error(`renamePendingRun: ${from} is not ${schedulerId}'s delayed pending run`);
    }
    await redis
      .multi()
      .rename(`${base}j:${from}`, `${base}j:${to}`)
      .zrem(`${base}delayed`, from)
      .zadd(`${base}delayed`, due, to)
      .hset(`${base}s:${schedulerId}`, 'pid', to)
      .exec();
  } finally {
    redis.disconnect();
  }
}
