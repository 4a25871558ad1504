/**
 * What Bull Board's own API tests ask of a BullMQ queue, asked of a Hopper queue through
 * HopperAdapter and Bull Board's HTTP API (`@bull-board/express`): the flow view, the default job
 * options, scheduler runs, the pending run refused by name, concurrency 0, obliterate's 409,
 * workers, the statuses shown, and an adapter that holds no connection of its own (a process using
 * it ends once its queues are closed). scripts/ecosystem/bull-board runs Bull Board's suite itself.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import { Queue, type QueueOptions } from 'hopper-queue';
import { afterEach, describe, expect, it } from 'vitest';
import { renamePendingRun } from '../../hopper/test/helpers/earlier-version.js';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect, signal, until } from '../../hopper/test/helpers/wait.js';
import { HopperAdapter, RefusedError } from '../src/index.js';

const env = useHopper();
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A Hopper Queue on this test's prefix, closed after the test. */
function queue(name: string, opts: QueueOptions = {}): Queue {
  return env.track(new Queue(name, { connection: env.url, prefix: env.prefix, ...opts }));
}

/** A node of Bull Board's flow view. */
interface FlowNode {
  id: string;
  name: string;
  queueName: string;
  state: string;
  progress?: unknown;
  truncated?: boolean;
  children: FlowNode[];
}

/** A scheduler as Bull Board lists it. */
interface SchedulerRow {
  id: string;
  next: number;
  nextRunJobId?: string;
  lastRun?: number;
  lastRunJobId?: string;
}

/** The parts of Bull Board's replies these tests read. */
interface Reply {
  nodeId?: string;
  isFlowNode?: boolean;
  flowRoot?: FlowNode;
  schedulers?: SchedulerRow[];
  queues?: {
    statuses: string[];
    isPaused: boolean;
    counts: Record<string, number>;
    jobs: { name: string }[];
    globalConcurrency: number | null;
  }[];
  workers?: { id: string; name: string | null; addr: string; age: number }[];
  error?: unknown;
  [field: string]: unknown;
}

/** Bull Board (actions on) over these queues on a loopback port; returns a JSON request helper and the adapters. */
async function board(...queues: Queue[]) {
  const adapters = queues.map((q) => new HopperAdapter(q, { readOnlyMode: false }));
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/');
  createBullBoard({ queues: adapters, serverAdapter });
  server = createServer(serverAdapter.getRouter() as Parameters<typeof createServer>[1]);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Reply }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body !== undefined ? { 'content-type': 'application/json' } : {},
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : {}) as Reply };
  };
  return { api, adapters };
}

describe("Bull Board's API on Hopper queues: what its own tests ask of BullMQ", () => {
  it('shows a flow across queues from any of its jobs, redacted; a job outside a flow is no flow', async () => {
    const parentName = env.queueName('bbf-parent');
    const childName = env.queueName('bbf-child');
    const tree = await env.flows().add({
      name: 'root',
      queueName: parentName,
      children: [
        { name: 'leaf-a', queueName: childName, data: { idx: 1 } },
        { name: 'leaf-b', queueName: childName, data: { idx: 2 } },
      ],
    });
    const leaf = tree.children![0].job;
    await leaf.updateProgress({ step: 1, password: 'hunter2' });
    const parent = queue(parentName);
    const child = queue(childName);
    const { api } = await board(parent, child);

    const fromChild = await api('GET', `/queues/${childName}/${leaf.id}/flow`);
    expect(fromChild.status).toBe(200);
    expect(fromChild.json).toMatchObject({ nodeId: leaf.id, isFlowNode: true });
    const root = fromChild.json.flowRoot!;
    expect(root).toMatchObject({ id: tree.job.id, name: 'root', queueName: parentName, state: 'waiting-children' });
    expect(root.children.map((c) => c.name).sort()).toEqual(['leaf-a', 'leaf-b']);
    expect(root.children.every((c) => c.queueName === childName && c.state === 'waiting')).toBe(true);
    // Progress is shown as the rest of the adapter shows it: redacted.
    const shown = root.children.find((c) => c.id === leaf.id)!;
    expect(shown.progress).toEqual({ step: 1, password: '[redacted]' });
    expect(JSON.stringify(fromChild.json)).not.toContain('hunter2');

    const fromRoot = await api('GET', `/queues/${parentName}/${tree.job.id}/flow`);
    expect(fromRoot.json.flowRoot).toMatchObject({ id: tree.job.id, children: [{}, {}] });

    // depth 1: the root alone, marked truncated (its counts say it has children).
    const shallow = await api('GET', `/queues/${parentName}/${tree.job.id}/flow?depth=1`);
    expect(shallow.json.flowRoot).toMatchObject({ id: tree.job.id, children: [], truncated: true });

    const alone = await parent.add('alone', {});
    const single = await api('GET', `/queues/${parentName}/${alone.id}/flow`);
    expect(single.status).toBe(200);
    expect(single.json).toMatchObject({ nodeId: alone.id, isFlowNode: false });
  });

  it("shows the queue's default job options", async () => {
    const name = env.queueName('bbd');
    const q = queue(name, { defaultJobOptions: { attempts: 3, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 100 } });
    const bare = queue(env.queueName('bbd-bare'));
    const { api } = await board(q, bare);
    const shown = await api('GET', `/queues/${name}/default-job-options`);
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({ attempts: 3, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 100 });
    expect((await api('GET', `/queues/${bare.name}/default-job-options`)).json).toEqual({});
  });

  it("names a scheduler's pending run, and once it ran, when the previous run started and which job it was", async () => {
    const name = env.queueName('bbr');
    const q = queue(name);
    await q.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report' });
    const { api } = await board(q);

    const before = (await api('GET', '/job-schedulers')).json.schedulers!;
    const nightly = before.find((s) => s.id === 'nightly')!;
    expect(nightly.nextRunJobId).toBe(`sched:nightly:${nightly.next}`);
    expect(await q.getJobState(nightly.nextRunJobId as string)).toBe('delayed');
    expect(nightly.lastRun).toBeUndefined();
    expect(nightly.lastRunJobId).toBeUndefined();

    await q.upsertJobScheduler('ticker', { every: 500 }, { name: 'tick' });
    const worker = env.worker(name, async () => 'ok');
    const started: number[] = [];
    worker.on('active', (job: { processedOn?: number }) => started.push(job.processedOn ?? 0));
    await collect(worker, 'completed', 2);
    await worker.close();

    const after = (await api('GET', '/job-schedulers')).json.schedulers!;
    const ticker = after.find((s) => s.id === 'ticker')!;
    expect(ticker.nextRunJobId).toBe(`sched:ticker:${ticker.next}`);
    expect(ticker.lastRunJobId).toBe(`sched:ticker:${ticker.next - 500}`);
    const last = await q.getJob(ticker.lastRunJobId as string);
    expect(last?.finishedOn).toEqual(expect.any(Number));
    // The pending run was planned as the previous run was taken.
    expect(Math.abs((ticker.lastRun as number) - started[started.length - 1])).toBeLessThan(1_000);
  });

  it("refuses to remove a scheduler's pending run alone, naming the scheduler (400)", async () => {
    const name = env.queueName('bbp');
    const q = queue(name);
    const pending = await q.upsertJobScheduler('protected', { pattern: '0 0 * * *' }, { name: 'task' });
    const { api, adapters } = await board(q);

    const refused = await api('PUT', `/queues/${name}/${pending!.id}/clean`);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'JOB_BELONGS_TO_JOB_SCHEDULER', jobSchedulerId: 'protected' });
    expect(await q.getJobState(pending!.id!)).toBe('delayed');
    expect(await q.getJobSchedulersCount()).toBe(1);

    // Whatever calls the job's remove (not Bull Board's check first): a refusal Bull Board answers 400.
    const job = await adapters[0].getJob(pending!.id!);
    await expect((job as unknown as { remove(): Promise<void> }).remove()).rejects.toMatchObject({
      constructor: RefusedError,
      statusCode: 400,
    });
    expect(await q.getJobState(pending!.id!)).toBe('delayed');
  });

  it("names and protects a pending run in BullMQ's form, repeat:<id>:<instant> (as hopper migrate keeps it)", async () => {
    const name = env.queueName('bbe');
    const q = queue(name);
    const pending = await q.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report' });
    const earlier = pending!.id!.replace(/^sched:/, 'repeat:');
    await renamePendingRun(env.url, env.prefix, name, 'nightly', pending!.id!, earlier);
    const { api } = await board(q);

    const nightly = (await api('GET', '/job-schedulers')).json.schedulers!.find((s) => s.id === 'nightly')!;
    expect(nightly.nextRunJobId).toBe(earlier);
    const refused = await api('PUT', `/queues/${name}/${encodeURIComponent(earlier)}/clean`);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'JOB_BELONGS_TO_JOB_SCHEDULER', jobSchedulerId: 'nightly' });
    expect(await q.getJobState(earlier)).toBe('delayed');
  });

  it('removes the global concurrency when Bull Board sets 0', async () => {
    const name = env.queueName('bbc');
    const q = queue(name);
    await q.setGlobalConcurrency(10);
    const { api } = await board(q);
    expect((await api('PUT', `/queues/${name}/concurrency`, { concurrency: 0 })).status).toBe(200);
    expect(await q.getGlobalConcurrency()).toBeNull();
    expect((await api('GET', '/queues')).json.queues![0].globalConcurrency).toBeNull();
    expect((await api('PUT', `/queues/${name}/concurrency`, { concurrency: 4 })).status).toBe(200);
    expect(await q.getGlobalConcurrency()).toBe(4);
  });

  it('answers 409 to obliterating a queue with active jobs, and obliterates it with force', async () => {
    const name = env.queueName('bbo');
    const q = queue(name);
    await q.add('hold', {});
    const release = signal();
    const worker = env.worker(name, async () => release.promise);
    await collect(worker, 'active', 1);
    await q.pause();
    const { api } = await board(q);

    const refused = await api('PUT', `/queues/${name}/obliterate`);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toEqual({ key: 'ERRORS.QUEUE_HAS_ACTIVE_JOBS' });
    expect(await q.getActiveCount()).toBe(1);
    release.resolve();
    await worker.close();
    expect((await api('PUT', `/queues/${name}/obliterate`, { force: true })).status).toBe(200);
    expect(await q.getJobCounts('completed')).toEqual({ completed: 0 });
  });

  it('lists workers with their Redis client id (as BullMQ), name (null when unnamed), host and process, and age', async () => {
    const name = env.queueName('bbw');
    const q = queue(name);
    const { api } = await board(q);
    env.worker(name, async () => 'ok', { name: 'crunch-1' });
    env.worker(name, async () => 'ok');
    let workers: NonNullable<Reply['workers']> = [];
    await until(async () => {
      workers = (await api('GET', `/queues/${name}/workers`)).json.workers ?? [];
      return workers.length === 2;
    }, 'both workers to be listed');
    expect(workers.map((w) => w.name).sort()).toEqual(['crunch-1', null]);
    for (const w of workers) {
      expect(Object.keys(w).sort()).toEqual(['addr', 'age', 'id', 'name']);
      // The workers opened their connections from options: each is named by its Redis client id.
      expect(w.id).toMatch(/^\d+$/);
      expect(Number.isInteger(w.age) && w.age >= 0).toBe(true);
      expect(w.addr).toBe(`${hostname()}:${process.pid}`);
    }
  });

  it("shows no paused tab: a paused Hopper queue's jobs are listed as waiting", async () => {
    const name = env.queueName('bbs');
    const q = queue(name);
    await q.pause();
    await q.add('held', {});
    const { api } = await board(q);
    const listed = (await api('GET', `/queues?activeQueue=${name}&status=waiting&page=1&jobsPerPage=10`)).json.queues![0];
    expect(listed.statuses).not.toContain('paused');
    expect(listed.isPaused).toBe(true);
    expect(listed.counts.waiting).toBe(1);
    expect(listed.jobs.map((j) => j.name)).toEqual(['held']);
  });

  it('holds no connection of its own: a process that used Redis stats or the flow view ends once its queue is closed', async () => {
    const name = env.queueName('bbx');
    // The built package, as an application runs it (npm test builds first). Each use in a process of its own.
    const script = `
      import { Queue } from 'hopper-queue';
      import { HopperAdapter } from 'hopper-queue-bull-board';
      const [url, prefix, name, use] = process.argv.slice(1);
      const queue = new Queue(name, { connection: url, prefix });
      const job = await queue.add('x', {});
      const adapter = new HopperAdapter(queue, { exposeServerInfo: true });
      const ok = use === 'stats'
        ? (await adapter.getRedisInfo()).includes('redis_version')
        : (await (await adapter.getFlowProducer()).getFlow({ queueName: name, id: job.id })).job.id === job.id;
      await queue.close();
      console.log(JSON.stringify({ ok }));`;
    const run = async (use: 'stats' | 'flow') => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, env.url, env.prefix, name, use], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      // Started under load, Node takes seconds; a held connection would keep it alive for good.
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.on('exit', (c, s) => resolve([c, s])),
      );
      clearTimeout(timer);
      return { use, code, sig, err, out: out.trim() };
    };
    const [stats, flow] = await Promise.all([run('stats'), run('flow')]);
    expect(stats).toEqual({ use: 'stats', code: 0, sig: null, err: '', out: '{"ok":true}' });
    expect(flow).toEqual({ use: 'flow', code: 0, sig: null, err: '', out: '{"ok":true}' });
  }, 90_000);
});
