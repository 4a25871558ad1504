/**
 * Grouped jobs through the rest of the job API, on an injected clock: delayed, retried with
 * backoff, removed, re-prioritized, cancelled, drained, cleaned, retried in bulk, replayed from
 * the dead-letter queue, run as flow children and fired by a job scheduler; and groups left with
 * nothing are forgotten. Each test checks where the jobs end; the audit after it checks the
 * groups' invariants.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { collect } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { claimAll, completeAll, names, runInOrder } from './manual.js';

const env = useHopper({ fakeClock: true });
const MINUTE = 60_000;

describe('groups: delayed, retried, removed, re-prioritized and cancelled grouped jobs', () => {
  it('a delayed grouped job joins its group when due, behind the jobs there, and waits for its concurrency', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('A', 1);
    const A = { group: { id: 'A' } };
    const d = await queue.add('d', {}, { ...A, delay: 1000 });
    await queue.add('a1', {}, A);
    await queue.add('a2', {}, A);
    const worker = env.worker(name, null, { autorun: false });
    const first = await claimAll(worker);
    expect(names(first)).toEqual(['a1']);
    expect(await d.getState()).toBe('delayed');
    expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['a2']);
    env.clock!.advance(1000);
    // Promoted by this claim into its group, which is still at its limit.
    expect(await claimAll(worker)).toEqual([]);
    expect(await d.getState()).toBe('waiting');
    expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['a2', 'd']);
    await completeAll(first);
    expect(await runInOrder(worker)).toEqual(['a2', 'd']);
  });

  it('a failed grouped job retried with backoff leaves its group while delayed and goes back when due', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const r = await queue.add('r', {}, { group: { id: 'A' }, attempts: 3, backoff: { type: 'fixed', delay: 1000 } });
    const worker = env.worker(name, null, { autorun: false });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [held] = await claimAll(worker);
      expect(held.job.id).toBe(r.id);
      expect(held.job.attemptsMade).toBe(attempt - 1);
      await held.job.moveToFailed(new Error(`fail ${attempt}`), held.token, false);
      expect(await r.getState()).toBe('delayed');
      // While its only job is delayed, the group (no setting of its own) is idle and forgotten.
      expect(await queue.getGroup('A')).toBeUndefined();
      expect(await claimAll(worker)).toEqual([]);
      env.clock!.advance(1000);
    }
    expect(await runInOrder(worker)).toEqual(['r']);
    expect((await queue.getJob(r.id as string))?.attemptsMade).toBe(3);
  });

  it("removing, re-prioritizing and cancelling waiting grouped jobs update their group's line", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const A = { group: { id: 'A' } };
    const [a1, a2, a3, a4] = await queue.addBulk([
      { name: 'a1', data: {}, opts: A },
      { name: 'a2', data: {}, opts: A },
      { name: 'a3', data: {}, opts: A },
      { name: 'a4', data: {}, opts: { ...A, priority: 2 } },
    ]);
    const b1 = await queue.add('b1', {}, { group: { id: 'B' } });
    const line = async (): Promise<string[]> => (await queue.getGroupJobs('A')).map((j) => j.name);
    await a2.changePriority({ priority: 1 });
    expect(await a2.getState()).toBe('prioritized');
    expect(await line()).toEqual(['a1', 'a3', 'a2', 'a4']);
    await a3.remove();
    expect(await line()).toEqual(['a1', 'a2', 'a4']);
    expect(await queue.cancelJob(a4.id as string, 'not wanted')).toBe('cancelled');
    expect(await line()).toEqual(['a1', 'a2']);
    await a2.changePriority({ priority: 0, lifo: true });
    expect(await a2.getState()).toBe('waiting');
    expect(await line()).toEqual(['a2', 'a1']);
    // B's only job removed: the group is empty (made idle by the next claim that reaches it).
    await b1.remove();
    expect(await queue.getGroupJobsCount('B')).toBe(0);
    const worker = env.worker(name, null, { autorun: false });
    expect(await runInOrder(worker)).toEqual(['a2', 'a1']);
    expect(await queue.getJobState(a1.id as string)).toBe('completed');
    expect((await queue.getJob(a4.id as string))?.failedReason).toBe('CancelledError: not wanted');
    expect(await queue.getJobState(a3.id as string)).toBe('unknown');
    expect((await queue.getGroups()).map((g) => g.id)).toEqual([]);
  });
});

describe('groups: drain, retryJobs, dead letters', () => {
  it('drain removes grouped ready jobs (and delayed ones when asked); a group at its limit is released to idle, and new jobs run', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('A', 1);
    const A = { group: { id: 'A' } };
    for (const n of ['a1', 'a2', 'a3']) await queue.add(n, {}, A);
    await queue.add('d', {}, { ...A, delay: 1000 });
    await queue.add('b1', {}, { group: { id: 'B' } });
    await queue.add('u', {});
    const worker = env.worker(name, null, { autorun: false });
    const held = await claimAll(worker, 2);
    expect(names(held)).toEqual(['u', 'a1']);
    await queue.drain();
    expect(await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active')).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 1,
      active: 2,
    });
    expect(await queue.getGroupJobsCount('A')).toBe(0);
    await queue.drain(true);
    expect(await queue.getDelayedCount()).toBe(0);
    await completeAll(held);
    expect(await queue.getGroup('A')).toMatchObject({ status: 'idle', active: 0, waiting: 0 });
    await queue.add('a4', {}, A);
    await queue.add('b2', {}, { group: { id: 'B' } });
    expect((await runInOrder(worker)).sort()).toEqual(['a4', 'b2']);
  });

  it('retryJobs puts failed grouped jobs back in their groups, where the group limit still applies', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('A', 1);
    for (const n of ['a1', 'a2', 'a3', 'b1']) await queue.add(n, {}, { group: { id: n[0].toUpperCase() } });
    const worker = env.worker(name, null, { autorun: false });
    for (;;) {
      const [held] = await claimAll(worker, 1);
      if (!held) break;
      await held.job.moveToFailed(new Error('down'), held.token, false);
    }
    expect(await queue.getFailedCount()).toBe(4);
    await queue.retryJobs({ state: 'failed' });
    expect(await queue.getGroupJobsCount('A')).toBe(3);
    expect(await queue.getGroupJobsCount('B')).toBe(1);
    // A's limit holds for the retried jobs: one of A at a time.
    const first = await claimAll(worker);
    expect(names(first).sort()).toEqual(['a1', 'b1']);
    await completeAll(first);
    expect(await runInOrder(worker)).toEqual(['a2', 'a3']);
    expect(await queue.getCompletedCount()).toBe(4);
  });

  it('a replayed dead letter goes back to its group, behind its concurrency limit', async () => {
    const name = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(name, { deadLetter: { queue: dlqName } });
    const dlq = env.queue(dlqName);
    await queue.setGroupConcurrency('A', 1);
    await queue.add('charge', { amount: 5 }, { group: { id: 'A' }, jobId: 'order-1' });
    const worker = env.worker(name, null, { autorun: false });
    const [failing] = await claimAll(worker);
    await failing.job.moveToFailed(new Error('card declined'), failing.token, false);
    const [letter] = await dlq.getWaiting();
    expect(letter.deadLetterOrigin).toMatchObject({ queue: name, jobId: 'order-1' });
    await queue.add('other', {}, { group: { id: 'A' } });
    const held = await claimAll(worker);
    expect(names(held)).toEqual(['other']);
    await letter.replay();
    expect(await queue.getJobState('order-1')).toBe('waiting');
    expect((await queue.getGroupJobs('A')).map((j) => j.id)).toEqual(['order-1']);
    expect(await claimAll(worker)).toEqual([]);
    await completeAll(held);
    expect(await runInOrder(worker)).toEqual(['charge']);
    expect((await queue.getJob('order-1'))?.returnvalue).toBe('ok');
    expect(await dlq.getWaitingCount()).toBe(0);
  });
});

describe('groups: clean, and groups left with nothing', () => {
  it('clean removes old waiting and prioritized jobs of groups too, walking past kept ones across batches', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const D = { group: { id: 'D' } };
    await queue.add('u-old', {});
    await queue.addBulk([
      { name: 'd-old1', data: {}, opts: D },
      { name: 'd-old2', data: {}, opts: D },
      { name: 'd-oldp', data: {}, opts: { ...D, priority: 1 } },
      { name: 'a-oldp', data: {}, opts: { group: { id: 'A' }, priority: 1 } },
    ]);
    env.clock!.advance(1000);
    // 1,200 newer jobs in groups A, B, C come before D's in the walk: D's old jobs are in the second batch of 1,000.
    const fresh = [];
    for (const g of ['A', 'B', 'C']) for (let i = 0; i < 400; i++) fresh.push({ name: `${g}-new`, data: {}, opts: { group: { id: g } } });
    await queue.addBulk(fresh.slice(0, 600));
    await queue.addBulk(fresh.slice(600));
    await queue.add('d-new', {}, D);
    const removed = await queue.clean(500, 0, 'wait');
    expect(removed).toHaveLength(3);
    expect((await queue.getGroupJobs('D')).map((j) => j.name)).toEqual(['d-new', 'd-oldp']);
    expect(await queue.clean(500, 0, 'prioritized')).toHaveLength(2);
    expect(await queue.getJobCounts('waiting', 'prioritized')).toEqual({ waiting: 1201, prioritized: 0 });
    expect((await queue.getGroupJobs('D')).map((j) => j.name)).toEqual(['d-new']);
    expect(await queue.getGroupJobsCount('A')).toBe(400);
    await queue.drain();
  });

  it('a group left with nothing (resumed without jobs, its settings removed) is forgotten; one still holding something is not', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.pauseGroup('X');
    expect((await queue.getGroup('X'))?.status).toBe('paused');
    await queue.resumeGroup('X');
    expect(await queue.getGroup('X')).toBeUndefined();
    await queue.setGroupOptions('Y', { concurrency: 2 });
    expect(await queue.getGroupConcurrency('Y')).toBe(2);
    await queue.setGroupOptions('Y', { concurrency: null });
    expect(await queue.getGroup('Y')).toBeUndefined();
    expect(await queue.getGroupsCount()).toBe(0);
    // Kept while it has a job, or a job running.
    await queue.add('z', {}, { group: { id: 'Z' } });
    await queue.pauseGroup('Z');
    await queue.resumeGroup('Z');
    expect(await queue.getGroup('Z')).toMatchObject({ status: 'ready', waiting: 1 });
    await queue.setGroupOptions('W', { concurrency: 1 });
    await queue.add('w', {}, { group: { id: 'W' } });
    const worker = env.worker(name, null, { autorun: false });
    const held = await claimAll(worker);
    expect(names(held).sort()).toEqual(['w', 'z']);
    await queue.setGroupOptions('W', { concurrency: null });
    expect(await queue.getGroup('W')).toMatchObject({ status: 'idle', active: 1 });
    await completeAll(held);
    expect(await queue.getGroups()).toEqual([]);
  });
});

describe('groups: flows and job schedulers', () => {
  it('flow children in groups run under their group limits; a grouped parent joins its group when its children are done', async () => {
    const parentQ = env.queueName('parents');
    const childQ = env.queueName('children');
    const children = env.queue(childQ);
    const parents = env.queue(parentQ);
    await children.setGroupConcurrency('A', 1);
    const node = await env.flows().add({
      name: 'report',
      queueName: parentQ,
      opts: { group: { id: 'P' } },
      children: [
        ...[1, 2, 3].map((i) => ({ name: `a${i}`, queueName: childQ, data: { i }, opts: { group: { id: 'A' } } })),
        { name: 'b1', queueName: childQ, data: { i: 4 }, opts: { group: { id: 'B' } } },
      ],
    });
    expect(await parents.getJobState(node.job.id as string)).toBe('waiting-children');
    expect(await parents.getGroupJobsCount('P')).toBe(0);
    expect(await children.getGroupJobsCount('A')).toBe(3);
    const childWorker = env.worker(childQ, null, { autorun: false });
    const first = await claimAll(childWorker);
    expect(names(first).sort()).toEqual(['a1', 'b1']);
    await completeAll(first);
    expect(await runInOrder(childWorker)).toEqual(['a2', 'a3']);
    // All children done: the parent is ready, in its own group.
    expect((await parents.getGroupJobs('P')).map((j) => j.id)).toEqual([node.job.id]);
    const parentWorker = env.worker(parentQ, async (job: Job) => Object.keys(await job.getChildrenValues()).length);
    const [[done]] = await collect<[Job]>(parentWorker, 'completed', 1);
    expect(done.id).toBe(node.job.id);
    expect(done.returnvalue).toBe(4);
  });

  it('a job scheduler whose template has a group: each occurrence joins the group and waits for its concurrency', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('A', 1);
    await queue.add('manual', {}, { group: { id: 'A' } });
    const worker = env.worker(name, null, { autorun: false });
    const held = await claimAll(worker);
    expect(names(held)).toEqual(['manual']);
    await queue.upsertJobScheduler('tick', { every: MINUTE }, { name: 'tick', opts: { group: { id: 'A' } } });
    // The first occurrence is due now: the claim makes it ready, in its group, still at its limit.
    expect(await claimAll(worker)).toEqual([]);
    const [occurrence] = await queue.getGroupJobs('A');
    expect(occurrence.name).toBe('tick');
    expect(occurrence.opts.group).toEqual({ id: 'A' });
    await completeAll(held);
    const [tick] = await claimAll(worker);
    expect(tick.job.id).toBe(occurrence.id);
    expect((await queue.getGroup('A'))?.active).toBe(1);
    await completeAll([tick]);
    await queue.removeJobScheduler('tick');
    expect(await queue.getCompletedCount()).toBe(2);
  });
});
