// Issue 34 (Redis): a database index the server lacks is refused at start instead of writing to
// db 0; Redis's error replies reach callers as typed errors, mapped once at the backend seam
// (OOM on any write becomes RedisFullError, other replies a BackendError naming the operation).
import { ReplyError as IoredisReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { BackendError, FakeClock, InvalidOptionsError, Queue, RedisFullError, ScriptError } from '../../src/index.js';
import { toTypedError } from '../../src/backend/guard.js';
import { Admin } from '../../src/admin/admin.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** ioredis's own error reply class (its type is `any` in ioredis's declarations). */
const ReplyError = IoredisReplyError as new (message: string) => Error;

function withDb(url: string, db: number): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

describe('Redis errors reach callers typed', () => {
  it('a db the server lacks is refused at start (Queue and Admin), not taken for db 0', async () => {
    const url = withDb(env.url, 99);
    const queue = env.track(new Queue(env.queueName(), { connection: url, prefix: env.prefix }));
    env.expectErrors(/DB index is out of range/);
    await expect(queue.waitUntilReady()).rejects.toThrow(InvalidOptionsError);
    await expect(queue.add('x', {})).rejects.toThrow(/connection\.db/);
    const admin = new Admin({
      connection: { host: new URL(env.url).hostname, port: Number(new URL(env.url).port), db: 99 },
      prefix: env.prefix,
    });
    try {
      await expect(admin.listQueues()).rejects.toThrow(/connection\.db must be a database this Redis server has, got 99/);
    } finally {
      await admin.close();
    }
  });

  it('maps a ReplyError to a BackendError naming the operation and what to do; OOM to RedisFullError', () => {
    const busy = toTypedError(new ReplyError('BUSY Redis is busy running a script.'), 'pause', 'redis', 'mail');
    expect(busy).toBeInstanceOf(BackendError);
    expect((busy as BackendError).operation).toBe('pause');
    expect((busy as Error).message).toMatch(/^Redis refused pause on queue "mail": BUSY .* retry once it ends/);
    const oom = toTypedError(new ReplyError('OOM command not allowed when used memory > maxmemory.'), 'upsertScheduler', 'redis', 'mail');
    expect(oom).toBeInstanceOf(RedisFullError);
    const script = new ScriptError('Script pause failed in Redis: OOM command not allowed when used memory > maxmemory', {
      cause: new ReplyError('OOM command not allowed when used memory > maxmemory.'),
    });
    expect(toTypedError(script, 'pause', 'redis', 'mail')).toBeInstanceOf(RedisFullError);
    expect(toTypedError(new TypeError("Cannot read properties of undefined (reading 'x')"), 'claim', 'redis', 'mail')).toBeInstanceOf(
      BackendError,
    );
    // A connection error is the caller's to retry: unchanged.
    const closed = new Error('Connection is closed.');
    expect(toTypedError(closed, 'claim', 'redis', 'mail')).toBe(closed);
  });

  it('Redis full: pause, upsertJobScheduler and cancelJob reject with RedisFullError or succeed, never a raw error', async () => {
    const server = await startRedisServer(['--maxmemory', '6mb', '--maxmemory-policy', 'noeviction']);
    env.track({ close: () => server.stop() });
    const opts = { connection: server.url, prefix: env.prefix, clock: new FakeClock() };
    const name = env.queueName();
    const queue = env.track(new Queue(name, opts));
    const waiting = await queue.add('w', {});
    const filler = env.track(new Queue(`${name}-fill`, opts));
    const pad = 'x'.repeat(8000);
    let refusal: unknown;
    for (let i = 0; i < 5000 && refusal === undefined; i++) await filler.add('pad', { pad }).catch((err: unknown) => (refusal = err));
    expect(refusal).toBeInstanceOf(RedisFullError);
    const outcomes = await Promise.allSettled([
      queue.upsertJobScheduler('s', { every: 60_000 }, { name: 'tick' }),
      queue.pause(),
      queue.cancelJob(waiting.id as string),
    ]);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(RedisFullError);
    }
    expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
    await filler.obliterate({ force: true });
  });
});
