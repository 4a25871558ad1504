/**
 * Weighted limits and budgets across real processes (forked on the built package): worker
 * processes under one weighted limiter never start more than its weight in any window (checked on
 * the claim times the engine recorded and the jobs' costs), and producer processes adding at once
 * never take a tenant past its budget. In the scale project: forking seven processes on the built
 * package takes 10-20 s on a 2-core machine, too long for the engine project's budget.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));
const workerScript = fileURLToPath(new URL('../fixtures/group-worker.mjs', import.meta.url));
const producerScript = fileURLToPath(new URL('../fixtures/budget-producer.mjs', import.meta.url));

interface Run {
  id: string;
  cost: number;
  po: number;
}

/** Forks `count` children of `script`, each told `json`; resolves with them once all say ready. */
async function forkAll<M>(script: string, count: number, queueName: string, json: unknown[], onMessage: (m: M) => void) {
  if (!existsSync(built))
    throw new Error('These tests run child processes on the built package: run `npm run build` first (npm test does).');
  const children: ChildProcess[] = [];
  const exits: Promise<unknown>[] = [];
  const ready: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const child = fork(script, [env.url, env.prefix, queueName, JSON.stringify(json[i])], { stdio: 'ignore' });
    children.push(child);
    exits.push(new Promise((resolve) => child.on('exit', resolve)));
    ready.push(
      new Promise((resolve, reject) => {
        child.on('exit', (code) => reject(new Error(`child process exited early (${code})`)));
        child.on('message', (m: M & { ready?: number }) => {
          if (m.ready !== undefined) resolve(m.ready);
          else onMessage(m);
        });
      }),
    );
  }
  let done = false;
  const kill = async (): Promise<void> => {
    if (done) return;
    done = true;
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(exits);
  };
  env.track({ close: kill });
  await Promise.all(ready);
  return { children, exits, kill };
}

describe('weighted limits and budgets across processes', () => {
  it('three worker processes under one weighted limiter never start more than its weight in any window', async () => {
    const name = env.queueName('wproc');
    const queue = env.queue(name);
    const limiter = { max: 100, duration: 500, weight: 'cost' };
    const runs: Run[] = [];
    const errors: string[] = [];
    let notify = (): void => {};
    const opts = { concurrency: 4, workMs: 5, limiter };
    const workers = await forkAll<{ ran?: Run; error?: string }>(workerScript, 3, name, [opts, opts, opts], (m) => {
      if (m.ran) runs.push(m.ran);
      if (m.error) errors.push(m.error);
      notify();
    });
    const costs = Array.from({ length: 24 }, (_, i) => 10 + ((i * 7) % 31)); // 10..40
    const allRan = new Promise<void>((resolve) => {
      notify = () => {
        if (runs.length === costs.length) resolve();
      };
    });
    await queue.addBulk(costs.map((cost, i) => ({ name: 'gen', data: { i }, opts: { cost } })));
    await allRan;
    for (const child of workers.children) child.send('close');
    await Promise.all(workers.exits);
    expect(errors).toEqual([]);
    const sorted = [...runs].sort((a, b) => a.po - b.po);
    let worst = 0;
    for (let i = 0; i < sorted.length; i++) {
      let sum = 0;
      for (let j = i; j < sorted.length && sorted[j].po < sorted[i].po + limiter.duration; j++) sum += sorted[j].cost;
      worst = Math.max(worst, sum);
    }
    expect(worst).toBeLessThanOrEqual(limiter.max);
    // The limit was the bottleneck: some window was nearly full (the next job did not fit).
    expect(worst).toBeGreaterThan(limiter.max - 40);
  });

  it('four producer processes adding at once never take a tenant past its budget', async () => {
    const name = env.queueName('bproc');
    const limit = 1000;
    const costs = Array.from({ length: 20 }, (_, i) => 7 + ((i * 13) % 29)); // 7..35, 20 jobs: ~420 per producer
    const spec = { limit, window: 60_000, costs };
    const reports: { accepted: number[]; refused: string[] }[] = [];
    let notify = (): void => {};
    const producers = await forkAll<{ accepted: number[]; refused: string[] }>(producerScript, 4, name, [spec, spec, spec, spec], (m) => {
      reports.push(m);
      notify();
    });
    const reported = new Promise<void>((resolve) => {
      notify = () => {
        if (reports.length === 4) resolve();
      };
    });
    for (const child of producers.children) child.send('go');
    await reported;
    await Promise.all(producers.exits);
    const accepted = reports.flatMap((r) => r.accepted).reduce((a, b) => a + b, 0);
    const refused = reports.flatMap((r) => r.refused);
    expect(new Set(refused)).toEqual(new Set(['BudgetExceededError']));
    expect(accepted).toBeLessThanOrEqual(limit);
    expect(accepted).toBeGreaterThan(limit - 35); // the budget was spent, up to one job's cost
    const queue = env.queue(name, { budget: { key: (d: { tenant: string }) => d.tenant, limit, window: 60_000 } });
    expect((await queue.getBudget('t')).use).toBe(accepted);
    expect(await queue.count()).toBe(reports.flatMap((r) => r.accepted).length);
  });
});
