/**
 * The seam's typed results, as each backend gives them (issue 15): the same named results from
 * the Redis backend (which maps its script codes) and the SQLite backend (which returns them
 * directly). Runs on both tiers.
 */
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import type { QueueBackend } from '../../src/backend/backend.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

/** A queue (made ready by an add) and a backend on it. */
async function setup(): Promise<{ queue: ReturnType<typeof env.queue>; backend: QueueBackend; name: string }> {
  const name = env.queueName();
  const queue = env.queue(name);
  await queue.waitUntilReady();
  const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
  return { queue, backend, name };
}

describe('typed seam results', () => {
  it('fenced job writes name what they did: done, stale-attempt, missing, not-active', async () => {
    const { queue, backend } = await setup();
    const job = await queue.add('j', {}, { removeOnComplete: false });
    const id = job.id as string;
    const claimed = await backend.claim({ count: 1, lockMs: 30_000, tokenPrefix: 't:' }, env.clock!.backendNow());
    const fence = { token: claimed.jobs[0].token, attempt: claimed.jobs[0].attemptsStarted };

    expect(await backend.updateProgress(id, '1', { token: 'other', attempt: fence.attempt })).toBe('stale-attempt');
    expect(await backend.updateProgress(id, '2', fence)).toBe('done');
    expect(await backend.addLog(id, 'line', fence, 0)).toEqual({ code: 'done', count: 1 });
    expect(await backend.addLog('no-such-job', 'line', undefined, 0)).toEqual({ code: 'missing', count: 0 });
    expect(await backend.moveToWait('no-such-job', fence)).toBe('missing');
    // Not delayed: its delay cannot change.
    expect(await backend.changeDelay(id, 1000, env.clock!.backendNow())).toBe('not-active');

    const ack = await backend.complete(
      [{ id, ...fence, returnvalue: '1', keep: { kind: 'keep' } }],
      { count: 0, lockMs: 1000, tokenPrefix: 'x:' },
      env.clock!.backendNow(),
    );
    expect(ack.codes).toEqual(['done']);
    expect(await job.getState()).toBe('completed');
  });

  it('yes/no writes answer booleans, and moves by id say which jobs moved', async () => {
    const { queue, backend } = await setup();
    expect(await backend.configureGroup('g', 'pause')).toBe(true);
    expect(await backend.configureGroup('g', 'pause')).toBe(false);
    expect(await backend.configureGroup('g', 'resume')).toBe(true);
    expect(await backend.configureGroup('g', 'resume')).toBe(false);

    expect(await backend.removeDeduplicationKey('none')).toBe(false);
    await queue.add('j', {}, { deduplication: { id: 'd' } });
    expect(await backend.removeDeduplicationKey('d')).toBe(true);

    const delayed = await queue.add('later', {}, { delay: 60_000 });
    const id = delayed.id as string;
    expect(await backend.retryJobs('failed', { count: 1, timestamp: 0, ids: [id] })).toEqual({ count: 0, moved: [false] });
    expect(await backend.promoteJobs({ count: 1, ids: [id, 'no-such-job'] })).toEqual({ count: 1, moved: [true, false] });
    expect(await backend.promoteJobs({ count: 10 })).toEqual({ count: 0, moved: [] });
    expect(await delayed.getState()).toBe('waiting');
  });

  it('scheduler writes: created, unchanged, replaced; changed, unchanged, missing; advance missing or raced', async () => {
    const { queue, backend } = await setup();
    await queue.upsertJobScheduler('a', { every: 60_000 }, { name: 'tick' });
    const stored = await backend.getScheduler('a');
    expect(stored).toBeDefined();
    const spec = JSON.parse(stored!.spec) as { overlap: string; catchup: string; catchupWindow: number };
    const write = {
      id: 'b',
      hash: 'first',
      spec: stored!.spec,
      template: stored!.template,
      overlap: spec.overlap,
      catchup: spec.catchup,
      catchupWindow: spec.catchupWindow,
      limit: 0,
      paused: false,
    };
    const now = env.clock!.backendNow();
    expect(await backend.upsertScheduler(write, now)).toBe('created');
    expect(await backend.upsertScheduler(write, now)).toBe('unchanged');
    expect(await backend.upsertScheduler({ ...write, hash: 'second' }, now)).toBe('replaced');

    expect(await backend.pauseScheduler('b', true, now)).toBe('changed');
    expect(await backend.pauseScheduler('b', true, now)).toBe('unchanged');
    expect(await backend.pauseScheduler('none', true, now)).toBe('missing');

    expect(await backend.advanceScheduler('none', '', [], null, 0, now)).toEqual({ kind: 'missing' });
    expect(await backend.advanceScheduler('a', 'not-its-last-instant', [], null, 0, now)).toEqual({ kind: 'raced' });
  });
});
