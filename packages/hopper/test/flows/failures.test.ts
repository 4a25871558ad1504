import { describe, expect, it } from 'vitest';
import { UnrecoverableError, WaitingChildrenError, type Job, type JobsOptions } from '../../src/index.js';
import { once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { withoutLockRenewal } from '../helpers/renewal.js';

const env = useHopper();

type Policy =
  'none' | 'queueDefault' | 'failParentOnFailure' | 'continueParentOnFailure' | 'ignoreDependencyOnFailure' | 'removeDependencyOnFailure';
type Route = 'retries exhausted' | 'unrecoverable' | 'dead-lettered';

const POLICIES: Policy[] = [
  'none',
  'queueDefault',
  'failParentOnFailure',
  'continueParentOnFailure',
  'ignoreDependencyOnFailure',
  'removeDependencyOnFailure',
];
const ROUTES: Route[] = ['retries exhausted', 'unrecoverable', 'dead-lettered'];

describe('flows: a child that fails for good', () => {
  for (const policy of POLICIES) {
    for (const route of ROUTES) {
      it(`${policy}, child ${route}`, async () => {
        const parentQ = env.queueName('p');
        const childQ = env.queueName('c');
        const dlqName = env.queueName('dlq');
        const parents = env.queue(parentQ, policy === 'queueDefault' ? { failParentOnChildFailure: true } : {});
        await parents.waitUntilReady();
        const events = env.events(parentQ);
        await events.waitUntilReady();
        const flows = env.flows();
        const badOpts: JobsOptions = { attempts: route === 'retries exhausted' ? 2 : 1 };
        if (route === 'dead-lettered') badOpts.deadLetter = { queue: dlqName };
        if (policy !== 'none' && policy !== 'queueDefault') badOpts[policy] = true;
        const node = await flows.add({
          name: 'parent',
          queueName: parentQ,
          opts: { removeOnComplete: false },
          children: [
            { name: 'bad', queueName: childQ, opts: badOpts },
            { name: 'good', queueName: childQ },
          ],
        });
        const parentId = node.job.id as string;
        const badKey = `${env.prefix}:${childQ}:${node.children![0].job.id}`;
        const goodKey = `${env.prefix}:${childQ}:${node.children![1].job.id}`;
        const broken: unknown = expect.stringContaining('broken');
        const gate = signal();
        const childFailed = once<[{ jobId: string; childKey: string; failedReason: string; policy: string }]>(events, 'child-failed');
        const childWorker = env.worker(
          childQ,
          async (job) => {
            if (job.name === 'bad') throw route === 'unrecoverable' ? new UnrecoverableError('broken') : new Error('broken');
            await gate.promise;
            return 'good result';
          },
          { concurrency: 2 },
        );
        let parentSaw: { values: unknown; failed: unknown } | undefined;
        const parentWorker = env.worker(parentQ, async (job) => {
          parentSaw = { values: await job.getChildrenValues(), failed: await job.getFailedChildrenValues() };
          return 'parent ran';
        });
        // Waits are made only where they are awaited: one left pending rejects after its timeout,
        // as an unhandled rejection in a later test.
        const parentCompletes = ['continueParentOnFailure', 'ignoreDependencyOnFailure', 'removeDependencyOnFailure'].includes(policy);
        const parentDone = parentCompletes ? once<[Job]>(parentWorker, 'completed') : undefined;

        const [event] = await childFailed;
        expect(event).toMatchObject({
          jobId: parentId,
          childKey: badKey,
          policy: policy === 'none' ? 'wait' : policy === 'queueDefault' ? 'failParentOnFailure' : policy,
        });
        expect(event.failedReason).toContain('broken');
        if (route === 'dead-lettered') expect(await env.queue(dlqName).getWaitingCount()).toBe(1);

        if (policy === 'continueParentOnFailure') {
          // The parent starts at once, while its other child is still running.
          await parentDone!;
          expect(parentSaw).toEqual({ values: {}, failed: { [badKey]: broken } });
          const goodDone = once(childWorker, 'completed');
          gate.resolve();
          await goodDone;
          return;
        }
        const goodDone = once(childWorker, 'completed');
        gate.resolve();
        if (policy === 'ignoreDependencyOnFailure' || policy === 'removeDependencyOnFailure') {
          await Promise.all([parentDone!, goodDone]);
          expect(parentSaw!.values).toEqual({ [goodKey]: 'good result' });
          expect(parentSaw!.failed).toEqual(policy === 'ignoreDependencyOnFailure' ? { [badKey]: broken } : {});
          return;
        }
        await goodDone;
        const parent = (await parents.getJob(parentId))!;
        if (policy === 'none') {
          // As in BullMQ the parent waits, but the failure is recorded and visible.
          expect(await parents.getJobState(parentId)).toBe('waiting-children');
          expect(await parent.getFailedChildrenValues()).toEqual({ [badKey]: broken });
          expect(await parent.getDependenciesCount()).toEqual({ processed: 1, unprocessed: 1, failed: 1, ignored: 0 });
          return;
        }
        await expect.poll(() => parents.getJobState(parentId)).toBe('failed');
        expect((await parents.getJob(parentId))!.failedReason).toBe(
          `child ${badKey} failed: ${(await childJobReason(childQ, node.children![0].job.id as string)) ?? ''}`,
        );
      });
    }
  }

  async function childJobReason(queue: string, id: string): Promise<string | undefined> {
    return (await env.queue(queue).getJob(id))?.failedReason;
  }

  it('with no policy, retrying the failed child unblocks the parent', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const flows = env.flows();
    const node = await flows.add({ name: 'p', queueName: q, opts: { removeOnComplete: false }, children: [{ name: 'c', queueName: q }] });
    let fail = true;
    const worker = env.worker(q, async (job) => {
      if (job.name === 'c' && fail) throw new Error('flaky');
      return job.name === 'p' ? Object.values(await job.getChildrenValues()) : 'child ok';
    });
    const [failed] = await once<[Job]>(worker, 'failed');
    expect(await queue.getJobState(node.job.id as string)).toBe('waiting-children');
    fail = false;
    const parentDone = once<[Job]>(worker, 'completed', (j: Job) => j.id === node.job.id);
    await failed.retry();
    const [parent] = await parentDone;
    expect(parent.returnvalue).toEqual(['child ok']);
    expect(await (await queue.getJob(node.job.id as string))!.getFailedChildrenValues()).toEqual({});
  });

  it('with no policy, removing the failed child unblocks the parent', async () => {
    const q = env.queueName();
    const flows = env.flows();
    const node = await flows.add({ name: 'p', queueName: q, children: [{ name: 'c', queueName: q }] });
    const worker = env.worker(q, async (job) => {
      if (job.name === 'c') throw new Error('nope');
      return 'parent ran';
    });
    const [failed] = await once<[Job]>(worker, 'failed');
    const parentDone = once<[Job]>(worker, 'completed');
    await failed.remove();
    const [parent] = await parentDone;
    expect(parent.id).toBe(node.job.id);
  });

  it('a dead-lettered child replayed from the dead-letter queue unblocks its waiting parent', async () => {
    const q = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(q);
    const dlq = env.queue(dlqName);
    const flows = env.flows();
    const node = await flows.add({
      name: 'p',
      queueName: q,
      opts: { removeOnComplete: false },
      children: [{ name: 'c', queueName: q, opts: { deadLetter: { queue: dlqName } } }],
    });
    let fail = true;
    const worker = env.worker(q, async (job) => {
      if (job.name === 'c' && fail) throw new Error('down');
      return job.name === 'p' ? Object.keys(await job.getChildrenValues()) : 'recovered';
    });
    await once(worker, 'failed');
    expect(await queue.getJobState(node.job.id as string)).toBe('waiting-children');
    fail = false;
    const parentDone = once<[Job]>(worker, 'completed', (j: Job) => j.id === node.job.id);
    expect(await dlq.replayDeadLetters()).toMatchObject({ replayed: 1 });
    const [parent] = await parentDone;
    expect(parent.returnvalue).toEqual([`${env.prefix}:${q}:${node.children![0].job.id}`]);
  });

  it('failParentOnFailure propagates up the tree, and a failed parent is dead-lettered by its own option', async () => {
    const q = env.queueName();
    const dlqName = env.queueName('dlq');
    const queue = env.queue(q);
    const flows = env.flows();
    const root = await flows.add({
      name: 'root',
      queueName: q,
      children: [
        {
          name: 'mid',
          queueName: q,
          opts: { failParentOnFailure: true, deadLetter: { queue: dlqName } },
          children: [{ name: 'leaf', queueName: q, opts: { failParentOnFailure: true } }],
        },
      ],
    });
    const worker = env.worker(q, async () => {
      throw new Error('leaf broke');
    });
    await once(worker, 'failed');
    await expect.poll(() => queue.getJobState(root.job.id as string)).toBe('failed');
    const mid = root.children![0].job.id as string;
    expect(await queue.getJobState(mid)).toBe('failed');
    expect((await queue.getJob(root.job.id as string))!.failedReason).toMatch(/^child .* failed: child .* failed: leaf broke$/);
    expect((await env.queue(dlqName).getWaiting()).map((j) => j.id)).toEqual([`${q}:${mid}:0`]);
  });

  it('a dynamic parent whose failParentOnFailure child failed fails at moveToWaitingChildren', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const childFailed = signal();
    const worker = env.worker(
      q,
      async (job, token) => {
        if (job.name === 'child') throw new Error('child broke');
        await queue.add('child', {}, { parent: { id: job.id as string, queue: job.queueQualifiedName }, failParentOnFailure: true });
        await childFailed.promise;
        if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
        return 'not reached';
      },
      { concurrency: 2 },
    );
    worker.on('failed', (job: Job | undefined) => {
      if (job?.name === 'child') childFailed.resolve();
    });
    const parent = await queue.add('parent', {}, { attempts: 3 });
    const [failedParent, error] = await once<[Job, Error]>(worker, 'failed', (j: Job) => j.id === parent.id);
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect(error.message).toMatch(/^child .* failed: child broke$/);
    expect(failedParent.attemptsMade).toBe(1);
  });

  it('a child that stalls too often fails its parent per its policy', async () => {
    env.expectErrors(/LockLostError/); // the stalled attempts' results are refused, and reported
    const q = env.queueName();
    const queue = env.queue(q);
    const flows = env.flows();
    const root = await flows.add({
      name: 'p',
      queueName: q,
      children: [{ name: 'c', queueName: q, opts: { failParentOnFailure: true } }],
    });
    // The first worker takes the child and never renews its lock; the rescue fails it for good.
    const hang = signal();
    withoutLockRenewal(env.worker(q, async () => hang.promise, { lockDuration: 200, stalledInterval: 50, maxStalledCount: 0 }));
    await expect.poll(() => queue.getJobState(root.children![0].job.id as string), { timeout: 5000 }).toBe('failed');
    await expect.poll(() => queue.getJobState(root.job.id as string)).toBe('failed');
    hang.resolve();
  });
});

describe('flows: cancellation', () => {
  it('cancelling a parent cancels its pending children and theirs; finished children are left', async () => {
    const q = env.queueName();
    const other = env.queueName();
    const queue = env.queue(q);
    const otherQueue = env.queue(other);
    const flows = env.flows();
    const root = await flows.add({
      name: 'root',
      queueName: q,
      children: [
        { name: 'quick', queueName: other, opts: { removeOnComplete: false } },
        { name: 'sub', queueName: other, children: [{ name: 'leaf', queueName: q, opts: { delay: 60_000 } }] },
      ],
    });
    const worker = env.worker(other, async () => 'done', { autorun: false });
    const quick = root.children![0].job.id as string;
    worker.run().catch(() => undefined);
    await once(worker, 'completed');
    await worker.close();
    expect(await queue.cancelJob(root.job.id as string, 'user aborted')).toBe('cancelled');
    const sub = root.children![1].job.id as string;
    const leaf = root.children![1].children![0].job.id as string;
    expect(await otherQueue.getJobState(quick)).toBe('completed');
    expect(await otherQueue.getJobState(sub)).toBe('failed');
    expect(await queue.getJobState(leaf)).toBe('failed');
    expect((await queue.getJob(leaf))!.failedReason).toBe('CancelledError: user aborted');
    expect(await queue.getJobState(root.job.id as string)).toBe('failed');
  });
});
