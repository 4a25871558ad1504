/**
 * Changing group limits while jobs run: a concurrency set on a group (or as the queue's default)
 * counts the jobs already running, and raising or removing a limit lets a parked group go on at
 * the next claim. Manual processing, so each claim is one step the test controls.
 */
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';
import { claimAll, completeAll, names } from './manual.js';

const env = useHopper();

describe('groups: changing limits while jobs run', () => {
  it.each([
    ['its own concurrency', 'own'],
    ['the default concurrency', 'default'],
  ])('%s set while 3 jobs run counts them: the next starts once fewer than the limit run', async (_label, kind) => {
    const name = env.queueName();
    const queue = env.queue(name);
    for (let i = 1; i <= 5; i++) await queue.add(`a${i}`, {}, { group: { id: 'A' } });
    const worker = env.worker(name, null, { autorun: false });
    const running = await claimAll(worker, 3);
    expect(names(running)).toEqual(['a1', 'a2', 'a3']);
    if (kind === 'own') await queue.setGroupConcurrency('A', 2);
    else await queue.setGroupDefaults({ concurrency: 2 });
    expect((await queue.getGroup('A'))?.active).toBe(3);
    expect(await claimAll(worker)).toEqual([]);
    expect((await queue.getGroup('A'))?.status).toBe('maxed');
    // 2 still run: at the limit.
    await completeAll(running.slice(0, 1));
    expect(await claimAll(worker)).toEqual([]);
    // 1 runs: one more may start.
    await completeAll(running.slice(1, 2));
    const next = await claimAll(worker);
    expect(names(next)).toEqual(['a4']);
    await completeAll([...running.slice(2), ...next]);
    const last = await claimAll(worker);
    expect(names(last)).toEqual(['a5']);
    await completeAll(last);
    expect(await queue.getCompletedCount()).toBe(5);
  });

  it.each([
    ['its own concurrency is removed', 'own-remove'],
    ['its own concurrency is raised', 'own-raise'],
    ['the default concurrency is removed', 'default-remove'],
    ['the default concurrency is raised', 'default-raise'],
  ])('a group parked at its limit goes on at the next claim when %s', async (_label, kind) => {
    const name = env.queueName();
    const queue = env.queue(name);
    if (kind.startsWith('own')) await queue.setGroupConcurrency('A', 1);
    else await queue.setGroupDefaults({ concurrency: 1 });
    for (let i = 1; i <= 3; i++) await queue.add(`a${i}`, {}, { group: { id: 'A' } });
    const worker = env.worker(name, null, { autorun: false });
    const first = await claimAll(worker);
    expect(names(first)).toEqual(['a1']);
    expect((await queue.getGroup('A'))?.status).toBe('maxed');
    if (kind === 'own-remove') await queue.setGroupOptions('A', { concurrency: null });
    if (kind === 'own-raise') await queue.setGroupConcurrency('A', 3);
    if (kind === 'default-remove') await queue.setGroupDefaults({ concurrency: null });
    if (kind === 'default-raise') await queue.setGroupDefaults({ concurrency: 3 });
    // No job of the group finished: the change alone lets the others start.
    const rest = await claimAll(worker);
    expect(names(rest)).toEqual(['a2', 'a3']);
    await completeAll([...first, ...rest]);
    expect(await queue.getCompletedCount()).toBe(3);
  });

  it("a group's limiter raised or removed while it is parked by it lets it go on at the next claim, and the queue default too", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupRateLimit('A', 1, 60_000);
    await queue.setGroupDefaults({ limiter: { max: 1, duration: 60_000 } });
    for (const n of ['a1', 'a2', 'a3', 'b1', 'b2']) await queue.add(n, {}, { group: { id: n[0].toUpperCase() } });
    const worker = env.worker(name, null, { autorun: false });
    const first = await claimAll(worker);
    expect(names(first)).toEqual(['a1', 'b1']);
    expect((await queue.getGroups()).map((g) => g.status)).toEqual(['limited', 'limited']);
    await queue.setGroupRateLimit('A', 2, 60_000);
    const second = await claimAll(worker);
    expect(names(second)).toEqual(['a2']);
    // B takes the queue's default: removing the default lets it go on.
    await queue.setGroupDefaults({ limiter: null });
    const more = await claimAll(worker);
    expect(names(more)).toEqual(['b2']);
    await queue.setGroupOptions('A', { limiter: null });
    const last = await claimAll(worker);
    expect(names(last)).toEqual(['a3']);
    await completeAll([...first, ...second, ...more, ...last]);
    expect(await queue.getCompletedCount()).toBe(5);
  });
});
