/**
 * The Lua layer as one Redis Functions library (issue 21): loaded by the first call that finds it
 * missing (a new server, a restart, FUNCTION FLUSH), the call then sent once more and applied once;
 * beside another version's library; EVALSHA where FUNCTION is denied (ACL, rename-command); and
 * error lines mapped to the source files. Each case on a private redis-server (they flush or
 * restrict the server's functions).
 */
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { LIBRARY, SCRIPTS } from '../../src/backend/redis/scripts.generated.js';
import { LIBRARY_RETRY_AFTER_OOM_MS, sourceLine, withSourceLines } from '../../src/backend/redis/script-runner.js';
import { Queue, RedisFullError, Worker, type Job } from '../../src/index.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper();

async function server(args: string[] = []): Promise<{ server: RedisServerHandle; admin: Redis }> {
  const handle = await startRedisServer(args);
  env.track({ close: () => handle.stop() });
  const admin = new Redis(handle.url);
  env.track({ close: async () => void admin.disconnect() });
  return { server: handle, admin };
}

/** Calls per command name from INFO commandstats (fcall, evalsha, eval, function|load). */
async function commandCalls(admin: Redis): Promise<Record<string, number>> {
  const info = String(await admin.call('INFO', 'commandstats'));
  const calls: Record<string, number> = {};
  for (const [, name, n] of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) calls[name] = Number(n);
  return calls;
}

async function libraries(admin: Redis): Promise<string[]> {
  const list = (await admin.call('FUNCTION', 'LIST')) as unknown[][];
  return list.map((entry) => String(entry[1])).sort();
}

/** Adds a job, runs it with a worker, and returns the queue's job counts. */
async function addAndRun(url: string, name: string): Promise<Record<string, number>> {
  const queue = env.track(new Queue(name, { connection: url, prefix: env.prefix }));
  const worker = env.track(new Worker(name, async (job: Job) => job.name, { connection: url, prefix: env.prefix }));
  const done = once(worker, 'completed');
  await queue.add('job', { n: 1 });
  await done;
  return queue.getJobCounts('completed', 'waiting', 'active');
}

describe('the Redis Functions library', () => {
  it('is loaded by the first call, and again after FUNCTION FLUSH: each call applied once', async () => {
    const { server: s, admin } = await server();
    const name = env.queueName();
    const queue = env.track(new Queue(name, { connection: s.url, prefix: env.prefix }));
    await queue.add('a', {});
    expect(await libraries(admin)).toEqual([LIBRARY.name]);
    await admin.call('FUNCTION', 'FLUSH');
    await queue.add('b', {});
    await queue.add('c', {});
    expect(await libraries(admin)).toEqual([LIBRARY.name]);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 3 });
    const calls = await commandCalls(admin);
    expect(calls['function|load']).toBe(2);
    expect(calls.evalsha).toBeUndefined();
  });

  it('runs beside another version of itself on one server', async () => {
    const { server: s, admin } = await server();
    // Another Hopper version: another library name, other function names.
    const other = LIBRARY.source.replaceAll(LIBRARY.name, 'hopper_000000000000');
    await admin.call('FUNCTION', 'LOAD', other);
    expect(await addAndRun(s.url, env.queueName())).toEqual({ completed: 1, waiting: 0, active: 0 });
    expect(await libraries(admin)).toEqual(['hopper_000000000000', LIBRARY.name].sort());
  });

  it('falls back to EVALSHA for an ACL user without FUNCTION', async () => {
    const { server: s, admin } = await server();
    await admin.call('ACL', 'SETUSER', 'nofunction', 'on', '>pw', '~*', '&*', '+@all', '-function');
    const url = `redis://nofunction:pw@127.0.0.1:${s.port}`;
    expect(await addAndRun(url, env.queueName())).toEqual({ completed: 1, waiting: 0, active: 0 });
    expect(await libraries(admin)).toEqual([]);
    const calls = await commandCalls(admin);
    expect(calls.evalsha).toBeGreaterThan(0);
  });

  it('falls back to EVALSHA for an ACL user without FCALL or FUNCTION', async () => {
    const { server: s, admin } = await server();
    await admin.call('ACL', 'SETUSER', 'nofcall', 'on', '>pw', '~*', '&*', '+@all', '-function', '-fcall', '-fcall_ro');
    const url = `redis://nofcall:pw@127.0.0.1:${s.port}`;
    expect(await addAndRun(url, env.queueName())).toEqual({ completed: 1, waiting: 0, active: 0 });
    const calls = await commandCalls(admin);
    expect(calls.fcall ?? 0).toBe(0); // refused by ACL (rejected_calls), never run
    expect(calls.evalsha).toBeGreaterThan(0);
  });

  it('falls back to EVALSHA where FUNCTION is renamed away (rename-command)', async () => {
    const { server: s, admin } = await server(['--rename-command', 'FUNCTION', '']);
    expect(await addAndRun(s.url, env.queueName())).toEqual({ completed: 1, waiting: 0, active: 0 });
    expect((await commandCalls(admin)).evalsha).toBeGreaterThan(0);
  });

  it('drains a full Redis whose library is missing with the standalone scripts, then loads it once memory is back', async () => {
    const { server: s, admin } = await server(['--maxmemory-policy', 'noeviction']);
    const name = env.queueName();
    const queue = env.track(new Queue(name, { connection: s.url, prefix: env.prefix }));
    await queue.addBulk([1, 2, 3].map((n) => ({ name: 'job', data: { n } })));
    // The library goes (a new Hopper version deployed, FUNCTION FLUSH) while Redis is full.
    await admin.call('FUNCTION', 'FLUSH');
    const used = Number(/used_memory:(\d+)/.exec(String(await admin.call('INFO', 'memory')))?.[1]);
    await admin.call('CONFIG', 'SET', 'maxmemory', String(Math.floor(used / 2)));
    // Adds stay refused as a whole (typed); a worker still starts and drains: its start (initQueue),
    // claim, complete and its periodic stall check (rescueStalled) allow OOM (a refused one would
    // be a worker 'error' event, which fails the test).
    await expect(queue.add('refused', {})).rejects.toBeInstanceOf(RedisFullError);
    const worker = env.track(new Worker(name, async (job: Job) => job.name, { connection: s.url, prefix: env.prefix }));
    await until(async () => (await queue.getJobCounts('completed')).completed === 3, 'the 3 jobs completed on a full Redis');
    expect(await libraries(admin)).toEqual([]);
    expect((await commandCalls(admin)).evalsha).toBeGreaterThan(0);
    // Memory back: the next call past the retry delay loads the library and uses it again.
    await admin.call('CONFIG', 'SET', 'maxmemory', '0');
    await worker.close();
    const later = Date.now() + LIBRARY_RETRY_AFTER_OOM_MS + 1;
    vi.spyOn(Date, 'now').mockReturnValue(later);
    try {
      await queue.add('after', {});
    } finally {
      vi.restoreAllMocks();
    }
    expect(await libraries(admin)).toEqual([LIBRARY.name]);
    expect(await queue.getJobCounts('waiting', 'completed')).toEqual({ waiting: 1, completed: 3 });
  });

  it('maps library lines to source files in error messages', async () => {
    // The first line of complete.lua's body in the library.
    const lines = LIBRARY.source.split('\n');
    const at = lines.findIndex((line) => line.includes(`function_name = '${SCRIPTS.complete.fn}'`)) + 2;
    expect(sourceLine(at)).toBe('complete.lua:1');
    expect(sourceLine(1)).toBeUndefined();
    expect(withSourceLines(`ERR user_function:${at + 1}: boom`)).toBe(`ERR user_function:${at + 1} (complete.lua:2): boom`);
    const base = lines.findIndex((line) => line.startsWith('--[[ base:')) + 1;
    expect(sourceLine(base)).toBe('includes/base.lua:1');
  });
});
