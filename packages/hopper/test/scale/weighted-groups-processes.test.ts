/**
 * Weighted group limits across real processes (forked on the built package): three worker
 * processes on a queue whose groups have weighted limiters (one its own, one the queue's group
 * default) never start more of a group's cost than its limiter allows in any window, checked on
 * the claim times the engine recorded and the jobs' costs. In the scale project: forking worker
 * processes on the built package is too slow for the engine project's budget.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));
const workerScript = fileURLToPath(new URL('../fixtures/group-worker.mjs', import.meta.url));

interface Run {
  id: string;
  group: string;
  cost: number;
  po: number;
}

/** Forks `count` group workers on `queueName`; resolves once all are ready. */
async function forkWorkers(count: number, queueName: string, opts: unknown, onMessage: (m: { ran?: Run; error?: string }) => void) {
  if (!existsSync(built))
    throw new Error('These tests run child processes on the built package: run `npm run build` first (npm test does).');
  const children: ChildProcess[] = [];
  const exits: Promise<unknown>[] = [];
  const ready: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const child = fork(workerScript, [env.url, env.prefix, queueName, JSON.stringify(opts)], { stdio: 'ignore' });
    children.push(child);
    exits.push(new Promise((resolve) => child.on('exit', resolve)));
    ready.push(
      new Promise((resolve, reject) => {
        child.on('exit', (code) => reject(new Error(`child process exited early (${code})`)));
        child.on('message', (m: { ready?: number; ran?: Run; error?: string }) => {
          if (m.ready !== undefined) resolve(m.ready);
          else onMessage(m);
        });
      }),
    );
  }
  let done = false;
  env.track({
    close: async () => {
      if (done) return;
      done = true;
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      await Promise.all(exits);
    },
  });
  await Promise.all(ready);
  return { children, exits };
}

/** The most cost started in any window of `duration` ms, over runs sorted by claim time. */
function worstWindow(runs: Run[], duration: number): number {
  const sorted = [...runs].sort((a, b) => a.po - b.po);
  let worst = 0;
  for (let i = 0; i < sorted.length; i++) {
    let sum = 0;
    for (let j = i; j < sorted.length && sorted[j].po < sorted[i].po + duration; j++) sum += sorted[j].cost;
    worst = Math.max(worst, sum);
  }
  return worst;
}

describe('weighted group limits across processes', () => {
  it("three worker processes never start more of a group's cost than its weighted limiter allows in any window", async () => {
    const name = env.queueName('wgproc');
    const queue = env.queue(name);
    const duration = 500;
    await queue.setGroupDefaults({ limiter: { max: 60, duration, weight: 'cost' } });
    await queue.setGroupOptions('a', { limiter: { max: 100, duration, weight: 'cost' } });
    const runs: Run[] = [];
    const errors: string[] = [];
    let notify = (): void => {};
    const workers = await forkWorkers(3, name, { concurrency: 4, workMs: 5 }, (m) => {
      if (m.ran) runs.push(m.ran);
      if (m.error) errors.push(m.error);
      notify();
    });
    const costs = Array.from({ length: 18 }, (_, i) => 10 + ((i * 7) % 31)); // 10..40
    const jobs = costs.flatMap((cost, i) => [
      { name: 'gen', data: { i }, opts: { group: { id: 'a' }, cost } },
      { name: 'gen', data: { i }, opts: { group: { id: 'b' }, cost: Math.min(cost, 30) } },
      { name: 'plain', data: { i }, opts: { group: { id: 'c' } } }, // weighs 1
    ]);
    const allRan = new Promise<void>((resolve) => {
      notify = () => {
        if (runs.length === jobs.length) resolve();
      };
    });
    await queue.addBulk(jobs);
    await allRan;
    for (const child of workers.children) child.send('close');
    await Promise.all(workers.exits);
    expect(errors).toEqual([]);
    const of = (group: string) => runs.filter((r) => r.group === group).map((r) => ({ ...r, cost: r.cost ?? 1 }));
    const worstA = worstWindow(of('a'), duration);
    const worstB = worstWindow(of('b'), duration);
    expect(worstA).toBeLessThanOrEqual(100);
    expect(worstB).toBeLessThanOrEqual(60);
    // The limits were the bottleneck: some window was nearly full (the next job did not fit).
    expect(worstA).toBeGreaterThan(100 - 40);
    expect(worstB).toBeGreaterThan(60 - 30);
    expect(of('c')).toHaveLength(costs.length);
  });
});
