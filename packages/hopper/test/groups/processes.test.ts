/**
 * Groups and limits across real worker processes (each a Worker with concurrency > 1, forked from
 * test/fixtures/group-worker.mjs on the built package): a group's concurrency, the worker
 * limiter, the queue's rate limit, a group's limiter and the queue's global concurrency hold
 * across all of them. Each job reports when it ran; the checks run on those records.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { waitFor } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';
import { greedyWindows, maxOverlap, overlaps, worstWindow, type Interval } from './records.js';

// Child processes open the test's connection: on SQLite, a file database (see useHopper).
const env = useHopper({ processes: true });
const script = fileURLToPath(new URL('../fixtures/group-worker.mjs', import.meta.url));
const built = fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url));

/** What a job run in a child reports: its wall-clock run, and `po`, the claim time the engine recorded. */
interface Run extends Interval {
  id: string;
  group?: string;
  po: number;
  pid: number;
}

interface WorkerOptions {
  concurrency: number;
  workMs: number;
  limiter?: { max: number; duration: number };
}

/**
 * Forks `count` worker processes on `queueName` and resolves once all are ready. `runs` collects
 * what their jobs report (`events` emits 'ran' for each); `stop()` closes them gracefully.
 */
async function startWorkers(count: number, queueName: string, opts: WorkerOptions) {
  if (!existsSync(built))
    throw new Error('These tests run child processes on the built package: run `npm run build` first (npm test does).');
  const runs: Run[] = [];
  /** The pid of the process holding each gate job (`data.gate`), as they report it. */
  const holding: number[] = [];
  const errors: string[] = [];
  const events = new EventEmitter();
  const children: ChildProcess[] = [];
  const exits: Promise<unknown>[] = [];
  const ready: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const child = fork(script, [env.url, env.prefix, queueName, JSON.stringify(opts)], { stdio: 'ignore' });
    children.push(child);
    exits.push(new Promise((resolve) => child.on('exit', resolve)));
    ready.push(
      new Promise((resolve, reject) => {
        child.on('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
        child.on('message', (m: { ready?: number; ran?: Run; error?: string; holding?: number }) => {
          if (m.ready !== undefined) resolve(m.ready);
          if (m.error !== undefined) errors.push(m.error);
          if (m.holding !== undefined) {
            holding.push(m.holding);
            events.emit('holding');
          }
          if (m.ran) {
            runs.push(m.ran);
            events.emit('ran');
          }
        });
      }),
    );
  }
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const child of children) if (child.exitCode === null && child.connected) child.send('close');
    await Promise.all(exits);
  };
  // Killed if the test fails before stopping them.
  env.track({
    close: async () => {
      if (stopped) return;
      stopped = true;
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(exits);
    },
  });
  await Promise.all(ready);
  /** Waits until `n` jobs have reported. */
  const reported = (n: number): Promise<void> => waitFor(events, 'ran', () => runs.length >= n, 20_000);
  /** Waits until `n` gate jobs are held. */
  const held = (n: number): Promise<void> => waitFor(events, 'holding', () => holding.length >= n, 20_000);
  /** Lets every held gate job finish. */
  const open = (): void => {
    for (const child of children) if (child.connected) child.send('open');
  };
  return { runs, holding, errors, stop, reported, held, open };
}

/** The stored jobs, by id. */
async function storedJobs(queueName: string): Promise<Map<string, Job>> {
  const jobs = await env.queue(queueName).getJobs(['completed']);
  return new Map(jobs.map((j) => [j.id as string, j]));
}

describe('groups across worker processes', () => {
  it('a group with concurrency 1 never runs 2 jobs at once across 4 processes of concurrency 10; other groups run in parallel', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupConcurrency('solo', 1);
    const workers = await startWorkers(4, name, { concurrency: 10, workMs: 5 });
    // Every process busy first: 40 gate jobs fill the 40 slots, so each process holds 10 of them
    // (ready alone does not say a process is claiming yet: on a loaded machine a late one found the
    // queue drained by the others). The jobs under test are added while the gates hold, then the
    // gates open together and all 4 processes claim from the same instant.
    await queue.addBulk(
      Array.from({ length: 40 }, (_, i) => ({ name: 'gate', data: { gate: true, i }, opts: { removeOnComplete: true } })),
    );
    await workers.held(40);
    const perProcess = new Map<number, number>();
    for (const pid of workers.holding) perProcess.set(pid, (perProcess.get(pid) ?? 0) + 1);
    expect([...perProcess.values()]).toEqual([10, 10, 10, 10]);
    // The other groups keep all 40 slots busy (30 ms jobs) while the 20 short jobs of 'solo' run,
    // so every process keeps claiming and any of them may take the group's next job.
    const jobs = [];
    for (let i = 0; i < 80; i++) {
      if (i < 20) jobs.push({ name: 'solo', data: { i, ms: 5 }, opts: { group: { id: 'solo' }, removeOnComplete: false } });
      for (const group of ['g1', 'g2', 'g3'])
        jobs.push({ name: group, data: { i, ms: 30 }, opts: { group: { id: group }, removeOnComplete: false } });
    }
    await queue.addBulk(jobs);
    workers.open();
    await workers.reported(260);
    await workers.stop();
    expect(workers.errors).toEqual([]);
    expect(await queue.getJobCounts('completed', 'active', 'waiting')).toEqual({ completed: 260, active: 0, waiting: 0 });

    const solo = workers.runs.filter((r) => r.group === 'solo');
    expect(solo).toHaveLength(20);
    // As each process saw it (wall clock of one machine)...
    expect(overlaps(solo)).toEqual([]);
    // ...and as the engine recorded it (Redis time): each claim of the group after the previous finish.
    const stored = await storedJobs(name);
    const engine = solo.map((r) => ({ start: r.po, end: stored.get(r.id)!.finishedOn! }));
    expect(overlaps(engine)).toEqual([]);
    // All 4 processes were claiming meanwhile (the gates above), so any of them could have taken
    // the group's next job had it been in turn; which did is up to timing, as is how many jobs
    // each ran. The other groups ran in parallel.
    for (const group of ['g1', 'g2', 'g3']) expect(maxOverlap(workers.runs.filter((r) => r.group === group))).toBeGreaterThan(1);
  });

  // The worker limiter and the queue's rate limit: every window of every run holds at most `max`
  // starts, and the workers wait for the window (the run takes about (n / max - 1) windows).
  it.each([
    ['the worker limiter', 'worker'],
    ['the queue rate limit', 'queue'],
  ])('%s holds in every window across 3 processes, and they wait for the window rather than lag', async (_label, kind) => {
    const name = env.queueName();
    const queue = env.queue(name);
    const limiter = { max: 4, duration: 250 };
    if (kind === 'queue') {
      await queue.setGlobalRateLimit(limiter.max, limiter.duration);
      expect(await queue.getGlobalRateLimit()).toEqual(limiter);
    }
    const workers = await startWorkers(3, name, { concurrency: 5, workMs: 2, limiter: kind === 'worker' ? limiter : undefined });
    const n = 24;
    await queue.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'x', data: { i } })));
    await workers.reported(n);
    await workers.stop();
    expect(workers.errors).toEqual([]);
    const starts = workers.runs.map((r) => r.po);
    expect(worstWindow(starts, limiter.duration)).toBe(limiter.max);
    // Close to `max` per window: n / max windows, a little slack for a burst split across workers.
    expect(greedyWindows(starts, limiter.duration)).toBeLessThanOrEqual(n / limiter.max + 2);
    const span = Math.max(...starts) - Math.min(...starts);
    const ideal = (n / limiter.max - 1) * limiter.duration;
    expect(span).toBeGreaterThanOrEqual(ideal);
    expect(span).toBeLessThan(2 * ideal + 2000);
    expect(await queue.getCompletedCount()).toBe(n);
  });

  it("a group's limiter holds in every window across 3 processes while another group runs unthrottled", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const limiter = { max: 3, duration: 200 };
    await queue.setGroupOptions('A', { limiter });
    expect((await queue.getGroup('A'))?.limiter).toEqual(limiter);
    const workers = await startWorkers(3, name, { concurrency: 5, workMs: 2 });
    const jobs = [];
    for (let i = 0; i < 15; i++) jobs.push({ name: 'a', data: { i }, opts: { group: { id: 'A' } } });
    for (let i = 0; i < 30; i++) jobs.push({ name: 'b', data: { i }, opts: { group: { id: 'B' } } });
    await queue.addBulk(jobs);
    await workers.reported(45);
    await workers.stop();
    expect(workers.errors).toEqual([]);
    const a = workers.runs.filter((r) => r.group === 'A').map((r) => r.po);
    const b = workers.runs.filter((r) => r.group === 'B').map((r) => r.po);
    expect(worstWindow(a, limiter.duration)).toBe(limiter.max);
    expect(greedyWindows(a, limiter.duration)).toBeLessThanOrEqual(15 / limiter.max + 2);
    // B is not held back by A's limit: all of B starts before A's last window.
    expect(Math.max(...b)).toBeLessThan(Math.max(...a));
    expect(worstWindow(b, limiter.duration)).toBeGreaterThan(limiter.max);
    expect(await queue.getCompletedCount()).toBe(45);
  });

  it('global concurrency caps the jobs running at once across 3 processes of concurrency 5', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGlobalConcurrency(3);
    expect(await queue.getGlobalConcurrency()).toBe(3);
    const workers = await startWorkers(3, name, { concurrency: 5, workMs: 10 });
    const jobs = [];
    for (let i = 0; i < 45; i++) jobs.push({ name: 'x', data: { i }, opts: i % 3 === 0 ? { group: { id: `g${i % 2}` } } : {} });
    await queue.addBulk(jobs);
    await workers.reported(45);
    await workers.stop();
    expect(workers.errors).toEqual([]);
    const overlap = maxOverlap(workers.runs);
    expect(overlap).toBeLessThanOrEqual(3);
    expect(overlap).toBeGreaterThan(1);
    // The engine's view: at each claim, fewer than 3 jobs claimed earlier were still unfinished.
    const stored = await storedJobs(name);
    expect(stored.size).toBe(45);
    expect(maxOverlap([...stored.values()].map((j) => ({ start: j.processedOn!, end: j.finishedOn! })))).toBeLessThanOrEqual(3);
  });
});
