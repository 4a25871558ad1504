/**
 * Weights, the backlog cap and pause/resume of a group, each with delayed, prioritized and
 * retried jobs, on an injected clock. Each test checks where the jobs end; the audit after it
 * checks the groups' invariants. (Grouped jobs through the rest of the job API: changes.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { GroupMaxSizeExceededError, type Job } from '../../src/index.js';
import { collect } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { claimAll, completeAll, names, runInOrder } from './manual.js';

const env = useHopper({ fakeClock: true });

describe('groups: weights', () => {
  it('2:1 weights give a 2:1 share (within 10%) over 3,000 jobs run by a worker of concurrency 10', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupOptions('heavy', { weight: 2 });
    for (let bulk = 0; bulk < 3; bulk++) {
      const jobs = [];
      for (let i = 0; i < 500; i++) {
        jobs.push({ name: 'heavy', data: {}, opts: { group: { id: 'heavy' } } });
        jobs.push({ name: 'light', data: {}, opts: { group: { id: 'light' } } });
      }
      await queue.addBulk(jobs);
    }
    const started: string[] = [];
    const worker = env.worker(name, async (job: Job) => void started.push(job.name), { concurrency: 10 });
    await collect(worker, 'completed', 3000, 60_000);
    expect(started).toHaveLength(3000);
    // The starts while both groups still had jobs: up to the moment either ran its last.
    let heavy = 0;
    let light = 0;
    for (const n of started) {
      if (n === 'heavy') heavy++;
      else light++;
      if (heavy === 1500 || light === 1500) break;
    }
    expect(heavy + light).toBeGreaterThan(2000);
    expect(heavy / light).toBeGreaterThanOrEqual(1.8);
    expect(heavy / light).toBeLessThanOrEqual(2.2);
  });
});

describe('groups: default weight', () => {
  it("the queue's default weight applies to groups without their own and to the jobs without a group; a group's own weight wins", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupDefaults({ weight: 2 });
    await queue.setGroupOptions('L', { weight: 1 });
    const jobs = [];
    for (let i = 0; i < 10; i++) {
      jobs.push({ name: 'd', data: {}, opts: { group: { id: 'D' } } });
      jobs.push({ name: 'l', data: {}, opts: { group: { id: 'L' } } });
      jobs.push({ name: 'u', data: {} });
    }
    await queue.addBulk(jobs);
    const worker = env.worker(name, null, { autorun: false });
    const order: string[] = [];
    for (let i = 0; i < 15; i++) {
      const [held] = await claimAll(worker, 1);
      order.push(held.job.name);
      await completeAll([held]);
    }
    // Three turns of the ring: 2 + 2 + 1 a turn.
    const count = (n: string): number => order.filter((x) => x === n).length;
    expect([count('d'), count('u'), count('l')]).toEqual([6, 6, 3]);
    expect(await runInOrder(worker)).toHaveLength(15);
  });
});

describe('groups: weights with delayed, prioritized and retried jobs', () => {
  it('weights 2:1 hold turn by turn when one group joins late from delayed jobs and retries, and the other has priorities', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupOptions('heavy', { weight: 2 });
    const heavy = [];
    for (let i = 0; i < 14; i++)
      heavy.push({ name: `h${i}`, data: {}, opts: { group: { id: 'heavy' }, priority: i % 2 ? 1 + (i % 3) : 0 } });
    await queue.addBulk(heavy);
    // The light group's jobs are all delayed; each fails once and is retried into its group.
    const light = [];
    for (let i = 0; i < 5; i++) light.push({ name: `l${i}`, data: {}, opts: { group: { id: 'light' }, delay: 1000 + i, attempts: 2 } });
    await queue.addBulk(light);
    env.clock!.advance(1010);
    const worker = env.worker(name, null, { autorun: false });
    const order: string[] = [];
    for (;;) {
      const [held] = await claimAll(worker, 1);
      if (!held) break;
      order.push(held.job.name);
      if (held.job.name.startsWith('l') && held.job.attemptsMade === 0)
        await held.job.moveToFailed(new Error('retry me'), held.token, false);
      else await completeAll([held]);
    }
    expect(order).toHaveLength(24);
    // 15 claims while both had jobs: five turns of two heavy and one light.
    const first = order.slice(0, 15);
    expect(first.filter((n) => n.startsWith('h'))).toHaveLength(10);
    expect(first.filter((n) => n.startsWith('l'))).toHaveLength(5);
    // Within heavy, jobs without a priority first, then by priority (FIFO within one).
    expect(order.filter((n) => n.startsWith('h'))).toEqual([
      'h0',
      'h2',
      'h4',
      'h6',
      'h8',
      'h10',
      'h12',
      'h3',
      'h9',
      'h1',
      'h7',
      'h13',
      'h5',
      'h11',
    ]);
    // Light: in due order, each retry behind the jobs already in the group.
    expect(order.filter((n) => n.startsWith('l'))).toEqual(['l0', 'l1', 'l2', 'l3', 'l4', 'l0', 'l1', 'l2', 'l3', 'l4']);
    expect(await queue.getCompletedCount()).toBe(19);
  });
});

describe('groups: backlog cap with delayed, prioritized and retried jobs', () => {
  it('prioritized jobs count toward maxSize; delayed ones are accepted and join when due, past the cap; a running job frees room', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupOptions('A', { maxSize: 2 });
    const A = { group: { id: 'A' } };
    await queue.add('p1', {}, { ...A, priority: 3 });
    await queue.add('w1', {}, A);
    await expect(queue.add('w2', {}, A)).rejects.toBeInstanceOf(GroupMaxSizeExceededError);
    await queue.add('d1', {}, { ...A, delay: 1000 });
    expect(await queue.getGroupJobsCount('A')).toBe(2);
    const worker = env.worker(name, null, { autorun: false });
    const [first] = await claimAll(worker, 1);
    expect(first.job.name).toBe('w1');
    // w1 runs: it no longer counts, so w2 fits.
    await queue.add('w2', {}, A);
    env.clock!.advance(1000);
    await queue.promoteJobs();
    // The due delayed job joined its group past the cap; adds are refused until it shrinks.
    expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['w2', 'd1', 'p1']);
    const refused = await queue.add('w3', {}, A).catch((e: unknown) => e);
    expect(refused).toMatchObject({ groupId: 'A', maxSize: 2, size: 3 });
    await completeAll([first]);
    expect(await runInOrder(worker)).toEqual(['w2', 'd1', 'p1']);
    expect(await queue.getCompletedCount()).toBe(4);
  });

  it('a retried job goes back to its group even past the cap: it is never lost', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupOptions('A', { maxSize: 1 });
    const r = await queue.add('r', {}, { group: { id: 'A' }, attempts: 2 });
    const worker = env.worker(name, null, { autorun: false });
    const [held] = await claimAll(worker, 1);
    await queue.add('w', {}, { group: { id: 'A' } });
    await held.job.moveToFailed(new Error('try again'), held.token, false);
    expect(await r.getState()).toBe('waiting');
    expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['w', 'r']);
    await expect(queue.add('x', {}, { group: { id: 'A' } })).rejects.toBeInstanceOf(GroupMaxSizeExceededError);
    expect(await runInOrder(worker)).toEqual(['w', 'r']);
    expect((await queue.getJob(r.id as string))?.attemptsMade).toBe(2);
  });
});

describe('groups: pause and resume with delayed, prioritized and retried jobs', () => {
  it('a paused group keeps its retried jobs, the delayed jobs that fall due and its priority order until resumed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const A = { group: { id: 'A' } };
    const r = await queue.add('r', {}, { ...A, attempts: 2 });
    const worker = env.worker(name, null, { autorun: false });
    const [held] = await claimAll(worker, 1);
    expect(await queue.pauseGroup('A')).toBe(true);
    await queue.add('d', {}, { ...A, delay: 1000 });
    await queue.add('p2', {}, { ...A, priority: 2 });
    await queue.add('p1', {}, { ...A, priority: 1 });
    await queue.add('b', {}, { group: { id: 'B' } });
    // The running job's retry goes back to its paused group.
    await held.job.moveToFailed(new Error('again'), held.token, false);
    env.clock!.advance(1000);
    // The claim promotes d into its paused group, and takes only B's job.
    const others = await claimAll(worker);
    expect(names(others)).toEqual(['b']);
    expect(await queue.getGroup('A')).toMatchObject({ status: 'paused', waiting: 2, prioritized: 2, active: 0 });
    expect(await queue.getJobState(r.id as string)).toBe('waiting');
    await completeAll(others);
    expect(await queue.resumeGroup('A')).toBe(true);
    expect(await runInOrder(worker)).toEqual(['r', 'd', 'p1', 'p2']);
    expect((await queue.getJob(r.id as string))?.attemptsMade).toBe(2);
  });

  it('pausing a group parked at its concurrency or by its rate limit holds it there until resumed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('A', 1);
    await queue.setGroupRateLimit('B', 1, 1000);
    for (const n of ['a1', 'a2', 'b1', 'b2']) await queue.add(n, {}, { group: { id: n[0].toUpperCase() } });
    const worker = env.worker(name, null, { autorun: false });
    const first = await claimAll(worker);
    expect(names(first)).toEqual(['a1', 'b1']);
    expect((await queue.getGroup('A'))?.status).toBe('maxed');
    expect((await queue.getGroup('B'))?.status).toBe('limited');
    expect(await queue.pauseGroup('A')).toBe(true);
    expect(await queue.pauseGroup('B')).toBe(true);
    // a1 finishes and B's window reopens: both stay paused.
    await completeAll(first);
    env.clock!.advance(1000);
    expect(await claimAll(worker)).toEqual([]);
    expect((await queue.getGroups()).map((g) => [g.id, g.status, g.waiting])).toEqual([
      ['A', 'paused', 1],
      ['B', 'paused', 1],
    ]);
    await queue.resumeGroup('A');
    await queue.resumeGroup('B');
    const rest = await claimAll(worker);
    expect(names(rest).sort()).toEqual(['a2', 'b2']);
    await completeAll(rest);
  });
});
