/**
 * addLog calls ioredis re-sends after a lost reply (the same command, same arguments, run twice)
 * are applied once. Simulated by calling the backend operation twice with the same request.
 * Redis-only: a SQLite call is a transaction in the calling process, never re-sent, so the SQLite
 * backend has no re-send to recognise (docs/backends.md). The log's behaviour on both backends:
 * test/reliability/resend.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('re-sent addLog calls', () => {
  it('addLog: a re-sent line is appended once; later calls of the same client still append', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('j', {});
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const id = job.id as string;
    expect(await backend.addLog(id, 'one', undefined, 0, { client: 'c1', seq: 1 })).toEqual({ code: 'done', count: 1 });
    // Two calls in flight when the connection dropped: both re-sent, in order.
    expect(await backend.addLog(id, 'two', undefined, 0, { client: 'c1', seq: 2 })).toEqual({ code: 'done', count: 2 });
    expect(await backend.addLog(id, 'one', undefined, 0, { client: 'c1', seq: 1 })).toEqual({ code: 'done', count: 2 });
    expect(await backend.addLog(id, 'two', undefined, 0, { client: 'c1', seq: 2 })).toEqual({ code: 'done', count: 2 });
    expect(await backend.addLog(id, 'three', undefined, 0, { client: 'c1', seq: 3 })).toEqual({ code: 'done', count: 3 });
    // Another client's numbering is its own.
    expect(await backend.addLog(id, 'other', undefined, 0, { client: 'c2', seq: 1 })).toEqual({ code: 'done', count: 4 });
    expect((await queue.getJobLogs(id)).logs).toEqual(['one', 'two', 'three', 'other']);
  });

  it('addLog: a call that arrives after a later one of its client (EVAL fallback) is still appended, once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('j', {});
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const id = job.id as string;
    await backend.addLog(id, 'five', undefined, 0, { client: 'c', seq: 5 });
    await backend.addLog(id, 'three', undefined, 0, { client: 'c', seq: 3 });
    await backend.addLog(id, 'three', undefined, 0, { client: 'c', seq: 3 });
    await backend.addLog(id, 'five', undefined, 0, { client: 'c', seq: 5 });
    await backend.addLog(id, 'four', undefined, 0, { client: 'c', seq: 4 });
    await backend.addLog(id, 'six', undefined, 0, { client: 'c', seq: 6 });
    await backend.addLog(id, 'four', undefined, 0, { client: 'c', seq: 4 });
    expect((await queue.getJobLogs(id)).logs).toEqual(['five', 'three', 'four', 'six']);
  });
});
