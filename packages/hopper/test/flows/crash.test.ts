import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WaitingChildrenError, type Job } from '../../src/index.js';
import { once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

// Child processes open the test's connection: on SQLite, a file database (see useHopper).
const env = useHopper({ processes: true });
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));

/** Forks a fixture worker and resolves with its first message of `kind` (rejects on an error or early exit). */
function forkWorker(fixture: string, args: string[], kind: string): { child: ChildProcess; ready: Promise<unknown> } {
  if (!existsSync(built)) throw new Error('Run `npm run build` first (npm test does): the child worker uses the built package.');
  const child = fork(fileURLToPath(new URL(`../fixtures/${fixture}`, import.meta.url)), args, { stdio: 'ignore' });
  const ready = new Promise((resolve, reject) => {
    child.on('message', (m: Record<string, unknown>) => (m[kind] !== undefined ? resolve(m[kind]) : reject(new Error(String(m.error)))));
    child.on('exit', (code) => reject(new Error(`${fixture} exited early (${code})`)));
  });
  return { child, ready };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('flows: crashes (real SIGKILL)', () => {
  it('a child whose worker is killed mid-job is rescued, and its parent still completes once', async () => {
    const parentQ = env.queueName();
    const childQ = env.queueName();
    const flows = env.flows();
    const node = await flows.add({ name: 'p', queueName: parentQ, children: [{ name: 'c', queueName: childQ, data: { v: 7 } }] });
    const { child, ready } = forkWorker('crash-worker.mjs', [env.url, env.prefix, childQ, '300'], 'started');
    await ready;
    await kill(child);
    const survivor = env.worker<{ v: number }>(childQ, async (job) => job.data.v, { stalledInterval: 100 });
    let parentRuns = 0;
    const parentWorker = env.worker(parentQ, async (job) => {
      parentRuns++;
      return Object.values(await job.getChildrenValues<number>());
    });
    const [done] = await once<[Job]>(parentWorker, 'completed');
    expect(done.id).toBe(node.job.id);
    expect(done.returnvalue).toEqual([7]);
    expect(parentRuns).toBe(1);
    await survivor.close();
  });

  it('a parent killed after adding its children (in a step) does not add them twice when it runs again', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const parent = await queue.add('parent', {});
    const { child, ready } = forkWorker('flow-spawner.mjs', [env.url, env.prefix, q], 'spawned');
    expect(await ready).toBe(parent.id);
    await kill(child);
    const worker = env.worker(
      q,
      async (job, token) => {
        if (job.name === 'child') return (job.data as { i: number }).i;
        await job.step('spawn', () => {
          throw new Error('the step must not run again');
        });
        if (await job.moveToWaitingChildren(token)) throw new WaitingChildrenError();
        return Object.values(await job.getChildrenValues<number>()).sort();
      },
      { stalledInterval: 100 },
    );
    const [done] = await once<[Job]>(worker, 'completed', (j: Job) => j.id === parent.id);
    expect(done.returnvalue).toEqual([0, 1, 2]);
    expect(await queue.getJobCountByTypes('completed')).toBe(4);
  });
});
