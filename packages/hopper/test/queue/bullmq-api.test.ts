/**
 * Members of BullMQ's public API added for drop-in compatibility (issue 13): each is checked
 * here against Hopper's own behaviour; BullMQ's suite is the oracle for the exact semantics.
 */
import { describe, expect, it } from 'vitest';
import { InvalidDataError, InvalidOptionsError, JobNotFoundError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { until } from '../helpers/wait.js';

const env = useHopper();

describe('BullMQ API: queue naming', () => {
  it('qualifiedName is <prefix>:<name> and toKey(id) is the public key job.parentKey and getChildrenValues use', async () => {
    const parentQ = env.queueName('parents');
    const childQ = env.queueName('children');
    const parents = env.queue(parentQ);
    const children = env.queue(childQ);
    expect(parents.qualifiedName).toBe(`${env.prefix}:${parentQ}`);
    expect(children.toKey('7')).toBe(`${env.prefix}:${childQ}:7`);
    const node = await env.flows().add({
      name: 'parent',
      queueName: parentQ,
      children: [{ name: 'child', queueName: childQ, data: {} }],
    });
    const child = node.children![0].job;
    expect(child.parentKey).toBe(parents.toKey(node.job.id!));
    expect(child.queueQualifiedName).toBe(children.qualifiedName);
    const deps = await node.job.getDependencies();
    expect(deps.unprocessed).toEqual([children.toKey(child.id!)]);
  });
});

describe('BullMQ API: progress and logs from the Queue', () => {
  it('updateJobProgress stores the progress and emits progress on the Queue', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.add('j', {});
    const seen: unknown[] = [];
    queue.on('progress', (id: string, progress: unknown) => seen.push([id, progress]));
    await queue.updateJobProgress(job.id!, { total: 120, completed: 40 });
    expect((await queue.getJob(job.id!))?.progress).toEqual({ total: 120, completed: 40 });
    expect(seen).toEqual([[job.id, { total: 120, completed: 40 }]]);
    await expect(queue.updateJobProgress('nope', 1)).rejects.toThrow(JobNotFoundError);
    await expect(queue.updateJobProgress('nope', 1)).rejects.toThrow('Missing key for job nope. updateProgress');
  });

  it('addJobLog appends lines (keeping keepLogs) and clearLogs empties or trims them', async () => {
    const queue = env.queue(env.queueName());
    const job = await queue.add('j', {});
    expect(await queue.addJobLog(job.id!, 'one')).toBe(1);
    expect(await queue.addJobLog(job.id!, 'two')).toBe(2);
    expect(await queue.addJobLog(job.id!, 'three', 2)).toBe(2);
    expect(await queue.getJobLogs(job.id!)).toEqual({ logs: ['two', 'three'], count: 2 });
    await queue.addJobLog(job.id!, 'four');
    await job.clearLogs(5);
    expect(await queue.getJobLogs(job.id!)).toEqual({ logs: ['two', 'three', 'four'], count: 3 });
    await job.clearLogs(1);
    expect(await queue.getJobLogs(job.id!)).toEqual({ logs: ['four'], count: 1 });
    await job.clearLogs();
    expect(await queue.getJobLogs(job.id!)).toEqual({ logs: [], count: 0 });
    await expect(job.clearLogs(-1)).rejects.toThrow(InvalidDataError);
    await expect(queue.addJobLog('nope', 'x')).rejects.toThrow('Missing key for job nope. addLog');
  });
});

describe('BullMQ API: deduplication on the job', () => {
  it('deduplicationId is loaded, and job.removeDeduplicationKey deletes only a key that still points to the job', async () => {
    const queue = env.queue(env.queueName());
    const first = await queue.add('j', {}, { jobId: 'a1', deduplication: { id: 'dd' } });
    expect(first.deduplicationId).toBe('dd');
    expect((await queue.getJob('a1'))?.deduplicationId).toBe('dd');
    expect(await (await queue.getJob('a1'))!.removeDeduplicationKey()).toBe(true);
    expect(await queue.getDeduplicationJobId('dd')).toBeUndefined();
    const second = await queue.add('j', {}, { jobId: 'a2', deduplication: { id: 'dd' } });
    expect(second.id).toBe('a2');
    // The key now points to a2: a1 leaves it alone.
    expect(await first.removeDeduplicationKey()).toBe(false);
    expect(await queue.getDeduplicationJobId('dd')).toBe('a2');
    const plain = await queue.add('j', {});
    expect(plain.deduplicationId).toBeUndefined();
    expect(await plain.removeDeduplicationKey()).toBe(false);
  });
});

describe('BullMQ API: getCountsPerPriority', () => {
  it('counts the ready jobs of each priority, grouped or not, paused or not', async () => {
    const queue = env.queue(env.queueName());
    await queue.pause();
    await queue.addBulk(Array.from({ length: 42 }, (_, i) => ({ name: 'j', data: {}, opts: { priority: i % 4 } })));
    await queue.add('g', {}, { priority: 2, group: { id: 't1' } });
    await queue.add('g', {}, { group: { id: 't1' } });
    await queue.add('later', {}, { priority: 1, delay: 60_000 });
    expect(await queue.getCountsPerPriority([0, 1, 2, 3, 3, 7])).toEqual({ '0': 12, '1': 11, '2': 11, '3': 10, '7': 0 });
    await expect(queue.getCountsPerPriority([-1])).rejects.toThrow(InvalidOptionsError);
  });
});

describe('BullMQ API: job.removeChildDependency', () => {
  it('the parent stops waiting for the child; it moves on when that was its last pending child', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const { job: parent, children } = await env.flows().add({
      name: 'parent',
      queueName: name,
      children: [
        { name: 'c0', queueName: name, data: {} },
        { name: 'c1', queueName: name, data: {} },
      ],
    });
    const [c0, c1] = children!.map((c) => c.job);
    expect(await c0.removeChildDependency()).toBe(true);
    expect(c0.parent).toBeUndefined();
    expect(c0.parentKey).toBeUndefined();
    expect((await queue.getJob(c0.id!))?.parentKey).toBeUndefined();
    expect(await parent.getState()).toBe('waiting-children');
    expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 1, failed: 0, ignored: 0 });
    // Again: nothing left to remove.
    expect(await c0.removeChildDependency()).toBe(false);
    expect(await c1.removeChildDependency()).toBe(true);
    expect(await parent.getState()).toBe('waiting');
    expect(await queue.getJobState(c1.id!)).toBe('waiting');
  });

  it('throws with BullMQ key phrase when the child or its parent is missing', async () => {
    const name = env.queueName();
    const { job: parent, children } = await env.flows().add({
      name: 'parent',
      queueName: name,
      children: [
        { name: 'c0', queueName: name, data: {} },
        { name: 'c1', queueName: name, data: {} },
      ],
    });
    const [c0, c1] = children!.map((c) => c.job);
    await c0.remove();
    await expect(c0.removeChildDependency()).rejects.toThrow(`Missing key for job ${c0.id}. removeChildDependency`);
    await parent.remove({ removeChildren: false });
    await expect(c1.removeChildDependency()).rejects.toThrow(`Missing key for parent job ${c1.parentKey}. removeChildDependency`);
  });
});

describe('BullMQ API: queue.getDependencies', () => {
  it("pages a parent's pending and processed children, with their jobs", async () => {
    const name = env.queueName();
    const childQ = env.queueName('kids');
    const queue = env.queue(name);
    const children = env.queue(childQ);
    const { job: parent } = await env.flows().add({
      name: 'parent',
      queueName: name,
      children: [0, 1, 2, 3].map((idx) => ({ name: `c${idx}`, queueName: childQ, data: { idx } })),
    });
    const all = await queue.getDependencies(parent.id!, 'pending', 0, -1);
    expect(all.total).toBe(4);
    expect(all.items.map((i) => i.id).sort()).toEqual((await parent.getDependencies()).unprocessed!.sort());
    expect(all.jobs.map((j) => j.name).sort()).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(all.jobs.every((j) => j.parentKey === queue.toKey(parent.id!))).toBe(true);
    const page = await queue.getDependencies(parent.id!, 'pending', 0, 2);
    expect(page.items).toHaveLength(3);
    expect(page.total).toBe(4);

    const done = new Set<string>();
    const worker = env.worker(childQ, async (job) => (job.data as { idx: number }).idx * 10);
    worker.on('completed', (job: Job) => done.add(job.id!));
    await until(async () => done.size === 4, 'children done');
    expect((await queue.getDependencies(parent.id!, 'pending', 0, -1)).total).toBe(0);
    const processed = await queue.getDependencies(parent.id!, 'processed', 0, -1);
    expect(processed.total).toBe(4);
    expect(processed.items.map((i) => JSON.parse(i.v!) as number).sort((a, b) => a - b)).toEqual([0, 10, 20, 30]);
    expect(processed.jobs).toHaveLength(await children.getCompletedCount());
    await expect(queue.getDependencies(parent.id!, 'failed' as 'pending', 0, -1)).rejects.toThrow(InvalidOptionsError);
  });
});

describe('BullMQ API: job.removeUnprocessedChildren', () => {
  it('removes pending children and their own pending children, and leaves finished ones', async () => {
    const name = env.queueName();
    const childQ = env.queueName('kids');
    const children = env.queue(childQ);
    const { job: parent, children: nodes } = await env.flows().add({
      name: 'parent',
      queueName: name,
      children: [
        { name: 'done', queueName: childQ, data: {}, opts: { priority: 1 } },
        { name: 'broken', queueName: childQ, data: {}, opts: { priority: 1 } },
        { name: 'pending', queueName: childQ, data: {}, opts: { delay: 60_000 } },
        {
          name: 'sub',
          queueName: childQ,
          data: {},
          opts: { delay: 60_000 },
          children: [{ name: 'grand', queueName: childQ, data: {}, opts: { delay: 60_000 } }],
        },
      ],
    });
    env.expectErrors(/broken/);
    const worker = env.worker(childQ, async (job: Job) => {
      if (job.name === 'broken') throw new Error('broken');
      return 'ok';
    });
    await until(async () => (await children.getCompletedCount()) === 1 && (await children.getFailedCount()) === 1, 'two children finished');
    await worker.close();
    await parent.removeUnprocessedChildren();
    const ids = nodes!.map((n) => n.job.id!);
    expect(await children.getJobState(ids[0])).toBe('completed');
    // A failed child stays: the parent still waits for its retry (docs/flows.md).
    expect(await children.getJobState(ids[1])).toBe('failed');
    expect(await children.getJob(ids[2])).toBeUndefined();
    expect(await children.getJob(ids[3])).toBeUndefined();
    expect(await children.getJob(nodes![3].children![0].job.id!)).toBeUndefined();
    expect(await parent.getState()).toBe('waiting-children');
    expect((await parent.getDependencies()).unprocessed).toEqual([children.toKey(ids[1])]);
  });
});

describe('BullMQ key phrases in refused parents', () => {
  it("a missing parent keeps BullMQ's wording", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await expect(queue.add('child', {}, { parent: { id: 'nope', queue: queue.qualifiedName } })).rejects.toThrow(
      `Missing key for parent job ${queue.toKey('nope')}. addJob`,
    );
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });
});

describe('BullMQ key phrases in refused job options', () => {
  it('size limit, failure-policy combinations and jitter', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('test', { foo: 'bar' }, { sizeLimit: 12 })).rejects.toThrow('The size of job test exceeds the limit 12 bytes');
    await expect(queue.add('test', {}, { removeDependencyOnFailure: true, failParentOnFailure: true })).rejects.toThrow(
      'The following options cannot be used together: removeDependencyOnFailure, failParentOnFailure',
    );
    await expect(queue.add('test', {}, { attempts: 2, backoff: { type: 'fixed', delay: 10, jitter: 2 } })).rejects.toThrow(
      'Jitter should be between 0 and 1',
    );
    expect(await queue.count()).toBe(0);
  });
});
