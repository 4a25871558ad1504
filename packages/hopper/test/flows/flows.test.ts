import { describe, expect, it } from 'vitest';
import { FlowConflictError, JobNotFoundError, WaitingChildrenError, type Job } from '../../src/index.js';
import { collect, once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('flows: FlowProducer', () => {
  it('a parent waits for its children across queues, then runs with their results', async () => {
    const parentQ = env.queueName('reports');
    const childQ = env.queueName('etl');
    const parents = env.queue(parentQ);
    const flows = env.flows();
    const node = await flows.add({
      name: 'report',
      queueName: parentQ,
      data: { month: '2026-11' },
      opts: { removeOnComplete: false },
      children: [
        { name: 'sales', queueName: childQ, data: { n: 2 }, opts: { removeOnComplete: false } },
        { name: 'refunds', queueName: childQ, data: { n: 3 } },
      ],
    });
    const parentId = node.job.id as string;
    expect(await parents.getJobState(parentId)).toBe('waiting-children');
    expect(await parents.getWaitingChildrenCount()).toBe(1);
    expect((await parents.getWaitingChildren()).map((j) => j.id)).toEqual([parentId]);
    const childKeys = node.children!.map((c) => `${env.prefix}:${childQ}:${c.job.id}`);
    expect(node.children!.map((c) => c.job.parentKey)).toEqual([
      `${env.prefix}:${parentQ}:${parentId}`,
      `${env.prefix}:${parentQ}:${parentId}`,
    ]);

    const parentJob = (await parents.getJob(parentId))!;
    expect(await parentJob.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, failed: 0, ignored: 0 });

    let seenByParent: Record<string, unknown> | undefined;
    const parentWorker = env.worker(parentQ, async (job) => {
      seenByParent = await job.getChildrenValues();
      return 'report done';
    });
    const childWorker = env.worker<{ n: number }>(childQ, async (job) => {
      expect(job.parent).toEqual({ id: parentId, queueKey: `${env.prefix}:${parentQ}` });
      return job.data.n * 10;
    });
    await once(parentWorker, 'completed');
    expect(seenByParent).toEqual({ [childKeys[0]]: 20, [childKeys[1]]: 30 });
    const done = (await parents.getJob(parentId))!;
    expect(done.returnvalue).toBe('report done');
    expect(await done.getDependencies()).toEqual({
      processed: { [childKeys[0]]: 20, [childKeys[1]]: 30 },
      unprocessed: [],
      failed: [],
      ignored: {},
    });
    await childWorker.close();
  });

  it('the parent keeps its own delay and priority once its children are done', async () => {
    const parentQ = env.queueName();
    const childQ = env.queueName();
    const parents = env.queue(parentQ);
    const flows = env.flows();
    const events = env.events(parentQ);
    await events.waitUntilReady();
    const delayedParent = await flows.add({
      name: 'late',
      queueName: parentQ,
      opts: { delay: 60_000 },
      children: [{ name: 'c', queueName: childQ }],
    });
    const prioritizedParent = await flows.add({
      name: 'urgent',
      queueName: parentQ,
      opts: { priority: 5 },
      children: [{ name: 'c', queueName: childQ }],
    });
    const moved = collect(events, 'delayed', 1);
    const childWorker = env.worker(childQ, async () => 'ok');
    const childrenDone = collect(childWorker, 'completed', 2);
    await moved;
    await childrenDone;
    await expect.poll(() => parents.getJobState(prioritizedParent.job.id as string)).toBe('prioritized');
    expect(await parents.getJobState(delayedParent.job.id as string)).toBe('delayed');
  });

  it('nested flows: grandchildren first, then children, then the root', async () => {
    const q = env.queueName();
    const flows = env.flows();
    const order: string[] = [];
    const worker = env.worker(q, async (job) => {
      order.push(job.name);
      const values = Object.values(await job.getChildrenValues<string>());
      return [job.name, ...values.sort()].join('+');
    });
    const root = await flows.add({
      name: 'root',
      queueName: q,
      opts: { removeOnComplete: false },
      children: [
        {
          name: 'a',
          queueName: q,
          children: [
            { name: 'a1', queueName: q },
            { name: 'a2', queueName: q },
          ],
        },
        { name: 'b', queueName: q },
      ],
    });
    const [job] = await once<[Job]>(worker, 'completed', (j: Job) => j.id === root.job.id);
    expect(order.indexOf('root')).toBe(order.length - 1);
    expect(order.indexOf('a')).toBeGreaterThan(Math.max(order.indexOf('a1'), order.indexOf('a2')));
    expect(job.returnvalue).toBe('root+a+a1+a2+b');
  });

  it('adding the same flow twice (jobIds on the nodes) creates nothing new', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const flows = env.flows();
    const flow = {
      name: 'p',
      queueName: q,
      opts: { jobId: 'order-1' },
      children: [
        { name: 'c1', queueName: q, opts: { jobId: 'order-1:charge' } },
        { name: 'c2', queueName: q, opts: { jobId: 'order-1:ship' } },
      ],
    };
    const first = await flows.add(flow);
    const second = await flows.add(flow);
    expect(second.job.id).toBe('order-1');
    expect(second.children!.map((c) => c.job.id).sort()).toEqual(['order-1:charge', 'order-1:ship']);
    expect(first.job.id).toBe('order-1');
    expect(await queue.getJobCounts('waiting', 'waiting-children')).toEqual({ waiting: 2, 'waiting-children': 1 });
  });

  it('refuses a flow whose new parent would take an existing job as child, writing nothing', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const flows = env.flows();
    await queue.add('taken', {}, { jobId: 'shared' });
    await expect(
      flows.add({
        name: 'p',
        queueName: q,
        children: [
          { name: 'c', queueName: q, opts: { jobId: 'shared' } },
          { name: 'd', queueName: q },
        ],
      }),
    ).rejects.toBeInstanceOf(FlowConflictError);
    expect(await queue.getJobCounts('waiting', 'waiting-children')).toEqual({ waiting: 1, 'waiting-children': 0 });
  });

  it('addBulk writes several flows in one atomic call', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const flows = env.flows();
    const nodes = await flows.addBulk([
      { name: 'p1', queueName: q, children: [{ name: 'c', queueName: q }] },
      {
        name: 'p2',
        queueName: q,
        children: [
          { name: 'c', queueName: q },
          { name: 'c', queueName: q },
        ],
      },
      { name: 'single', queueName: q },
    ]);
    expect(nodes.map((n) => n.children?.length ?? 0)).toEqual([1, 2, 0]);
    expect(await queue.getJobCounts('waiting', 'waiting-children')).toEqual({ waiting: 4, 'waiting-children': 2 });
    // One bad node refuses the whole call.
    await queue.add('taken', {}, { jobId: 'x' });
    await expect(
      flows.addBulk([
        { name: 'p3', queueName: q, children: [{ name: 'c', queueName: q }] },
        { name: 'p4', queueName: q, children: [{ name: 'c', queueName: q, opts: { jobId: 'x' } }] },
      ]),
    ).rejects.toBeInstanceOf(FlowConflictError);
    expect(await queue.getJobCounts('waiting', 'waiting-children')).toEqual({ waiting: 5, 'waiting-children': 2 });
  });

  it('getFlow reads a tree back, bounded by depth and maxChildren', async () => {
    const q = env.queueName();
    const flows = env.flows();
    const added = await flows.add({
      name: 'root',
      queueName: q,
      children: [
        { name: 'a', queueName: q, children: [{ name: 'a1', queueName: q }] },
        { name: 'b', queueName: q },
        { name: 'c', queueName: q },
      ],
    });
    const full = await flows.getFlow({ queueName: q, id: added.job.id as string });
    expect(full!.job.name).toBe('root');
    expect(full!.children!.map((c) => c.job.name).sort()).toEqual(['a', 'b', 'c']);
    expect(full!.children!.find((c) => c.job.name === 'a')!.children!.map((c) => c.job.name)).toEqual(['a1']);
    // depth counts levels from the job's own, as in BullMQ: 2 reads the job and its children.
    const shallow = await flows.getFlow({ queueName: q, id: added.job.id as string, depth: 2, maxChildren: 2 });
    expect(shallow!.children).toHaveLength(2);
    expect(shallow!.children!.every((c) => c.children === undefined)).toBe(true);
    const alone = await flows.getFlow({ queueName: q, id: added.job.id as string, depth: 1 });
    expect(alone!.job.name).toBe('root');
    expect(alone!.children).toBeUndefined();
    expect(await flows.getFlow({ queueName: q, id: 'nope' })).toBeUndefined();
  });

  it('a parent of 10,000 children, added in bounded chunks, completes once all are done', async () => {
    const parentQ = env.queueName();
    const childQ = env.queueName();
    const flows = env.flows();
    const children = Array.from({ length: 10_000 }, (_, i) => ({ name: 'send', queueName: childQ, data: { i } }));
    const node = await flows.add({ name: 'newsletter', queueName: parentQ, opts: { removeOnComplete: false }, children });
    expect(node.children).toHaveLength(10_000);
    const parentJob = (await env.queue(parentQ).getJob(node.job.id as string))!;
    expect(await parentJob.getDependenciesCount({ unprocessed: true })).toEqual({ unprocessed: 10_000 });
    const parentWorker = env.worker(parentQ, async (job) => (await job.getDependenciesCount()).processed);
    env.worker(childQ, async () => 1, { concurrency: 100 });
    const [done] = await once<[Job]>(parentWorker, 'completed', () => true, 60_000);
    expect(done.returnvalue).toBe(10_000);
    const page = await parentJob.getDependencies({ processed: { cursor: 0, count: 100 } });
    expect(Object.keys(page.processed!).length).toBeGreaterThan(0);
    expect(page.nextProcessedCursor).toBeGreaterThan(0);
  }, 90_000);
});

describe('flows: dynamic children', () => {
  it('a running job adds children, waits for them, and runs again with their results', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const runs: string[] = [];
    const worker = env.worker(q, async (job, token) => {
      if (job.name === 'child') return `child ${String((job.data as { i: number }).i)}`;
      runs.push(`parent run ${runs.length + 1}`);
      const step = await job.step('spawn', async () => {
        for (let i = 0; i < 3; i++) {
          await queue.add('child', { i }, { parent: { id: job.id as string, queue: job.queueQualifiedName } });
        }
        return 'spawned';
      });
      expect(step).toBe('spawned');
      if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
      return Object.values(await job.getChildrenValues<string>()).sort();
    });
    const parent = await queue.add('parent', {}, { removeOnComplete: false });
    const [done] = await once<[Job]>(worker, 'completed', (j: Job) => j.id === parent.id);
    expect(done.returnvalue).toEqual(['child 0', 'child 1', 'child 2']);
    expect(runs).toEqual(['parent run 1', 'parent run 2']);
    expect((await queue.getJob(parent.id as string))!.attemptsMade).toBe(1);
  });

  it('moveToWaitingChildren says false when no child is pending', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const worker = env.worker(q, async (job, token) => job.moveToWaitingChildren(token));
    await queue.add('lonely', {});
    const [, result] = await once<[Job, boolean]>(worker, 'completed');
    expect(result).toBe(false);
  });

  it('refuses a child whose parent is missing or finished, writing nothing', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    await expect(queue.add('c', {}, { parent: { id: 'ghost', queue: `${env.prefix}:${q}` } })).rejects.toBeInstanceOf(JobNotFoundError);
    const finished = await queue.add('done', {}, { removeOnComplete: false });
    const worker = env.worker(q, async () => 'ok');
    await once(worker, 'completed');
    await worker.close();
    await expect(queue.add('c', {}, { parent: { id: finished.id as string, queue: `${env.prefix}:${q}` } })).rejects.toBeInstanceOf(
      FlowConflictError,
    );
    await expect(queue.add('c', {}, { parent: { id: 'x', queue: 'otherprefix:q' } })).rejects.toThrow(/not a queue under the prefix/);
    expect(await queue.getJobCounts('waiting', 'completed')).toEqual({ waiting: 0, completed: 1 });
  });

  it('removing a pending child releases its parent when it was the last', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const flows = env.flows();
    const node = await flows.add({ name: 'p', queueName: q, children: [{ name: 'c', queueName: q }] });
    await queue.remove(node.children![0].job.id as string);
    expect(await queue.getJobState(node.job.id as string)).toBe('waiting');
    expect(await (await queue.getJob(node.job.id as string))!.getDependenciesCount()).toEqual({
      processed: 0,
      unprocessed: 0,
      failed: 0,
      ignored: 0,
    });
  });
});

describe('flows: adds with a parent beside other adds', () => {
  it('concurrent single adds of children and of deduplicated jobs do not interfere', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const parent = await queue.add('parent', {});
    const [child, deduped, plain] = await Promise.all([
      queue.add('child', {}, { parent: { id: parent.id as string, queue: `${env.prefix}:${q}` } }),
      queue.add('dedup', {}, { deduplication: { id: 'd1' } }),
      queue.add('plain', {}),
    ]);
    expect(child.parentKey).toBe(`${env.prefix}:${q}:${parent.id}`);
    expect(await queue.getDeduplicationJobId('d1')).toBe(deduped.id);
    expect(await queue.getJobState(plain.id as string)).toBe('waiting');
    expect(await (await queue.getJob(parent.id as string))!.getDependenciesCount()).toEqual({
      processed: 0,
      unprocessed: 1,
      failed: 0,
      ignored: 0,
    });
    await expect(
      queue.addBulk([
        { name: 'child', data: {}, opts: { parent: { id: parent.id as string, queue: `${env.prefix}:${q}` } } },
        { name: 'dedup', data: {}, opts: { deduplication: { id: 'd2' } } },
      ]),
    ).rejects.toThrow(/cannot mix jobs with a parent and jobs with deduplication/);
  });
});
