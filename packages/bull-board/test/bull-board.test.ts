/**
 * Bull Board's own HTTP API (`@bull-board/express`) driving Hopper queues through HopperAdapter:
 * counts, job lists and detail, retry, promote, clean, pause and resume, schedulers, Redis stats.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'hopper-queue';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect, until } from '../../hopper/test/helpers/wait.js';
import { HopperAdapter } from '../src/index.js';

const env = useHopper();
let server: Server | undefined;
let adapters: HopperAdapter[] = [];

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await Promise.all(adapters.map((a) => a.close()));
  adapters = [];
});

/**
 * Bull Board (its express server adapter, as the whole server) on a loopback port over these Hopper
 * queues, with actions and the server's facts turned on (security.test.ts covers the defaults); returns a fetch helper.
 */
async function board(...names: string[]) {
  // The adapter takes the package's Queue (what an application imports from 'hopper-queue').
  adapters = names.map(
    (name) =>
      new HopperAdapter(env.track(new Queue(name, { connection: env.url, prefix: env.prefix })), {
        readOnlyMode: false,
        exposeServerInfo: true,
      }),
  );
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/');
  createBullBoard({ queues: adapters, serverAdapter });
  server = createServer(serverAdapter.getRouter() as Parameters<typeof createServer>[1]);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Reply }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : {}) as Reply };
  };
}

/** The parts of Bull Board's replies the tests read. */
interface Reply {
  queues: { name: string; counts: Record<string, number>; jobs: { id: string; name: string; failedReason: string }[] }[];
  job: { name: string; data: unknown; failedReason: string };
}

describe('Bull Board on Hopper queues (HopperAdapter)', () => {
  it('lists counts and jobs, shows a job, retries, promotes, cleans, pauses and resumes', async () => {
    const name = env.queueName('bb');
    const queue = env.queue(name);
    await queue.add('ok', { n: 1 }, { removeOnComplete: false });
    await queue.add('bad', { n: 2 });
    await queue.add('later', { n: 3 }, { delay: 3_600_000, jobId: 'later-1' });
    let fail = true;
    const worker = env.worker(name, async (job) => {
      if (job.name === 'bad' && fail) throw new Error('boom');
      return 'done';
    });
    await Promise.all([collect(worker, 'completed', 1), collect(worker, 'failed', 1)]);
    const api = await board(name);

    const list = await api('GET', `/queues?activeQueue=${name}&status=failed&page=1&jobsPerPage=10`);
    expect(list.status).toBe(200);
    const q = list.json.queues.find((x) => x.name === name);
    expect(q?.counts).toMatchObject({ completed: 1, failed: 1, delayed: 1 });
    expect(q?.jobs.map((j) => [j.name, j.failedReason])).toEqual([['bad', 'boom']]);
    const failedId = String(q?.jobs[0].id);

    const detail = await api('GET', `/queues/${name}/${failedId}`);
    expect(detail.status).toBe(200);
    expect(detail.json.job).toMatchObject({ name: 'bad', data: { n: 2 }, failedReason: 'boom' });

    fail = false;
    const done = collect(worker, 'completed', 1);
    const retried = await api('PUT', `/queues/${name}/${failedId}/retry`);
    expect(retried.status).toBeLessThan(300);
    await done;
    expect(await queue.getJobState(failedId)).toBe('completed');

    const promoted = await api('PUT', `/queues/${name}/promote`);
    expect(promoted.status).toBeLessThan(300);
    await until(async () => (await queue.getJobState('later-1')) !== 'delayed', 'the delayed job to be promoted');

    await until(async () => (await queue.getJobState('later-1')) === 'completed', 'the promoted job to complete');
    // Bull Board's clean keeps the last 5 s (its grace): these just finished, so they stay...
    const cleaned = await api('PUT', `/queues/${name}/clean/completed`);
    expect(cleaned.status).toBeLessThan(300);
    expect((await queue.getJobCounts('completed')).completed).toBe(3);
    // ...and the adapter's clean with no grace removes them.
    await adapters[0].clean('completed', 0);
    expect((await queue.getJobCounts('completed')).completed).toBe(0);

    expect((await api('PUT', `/queues/${name}/pause`)).status).toBeLessThan(300);
    expect(await queue.isPaused()).toBe(true);
    expect((await api('PUT', `/queues/${name}/resume`)).status).toBeLessThan(300);
    expect(await queue.isPaused()).toBe(false);
    await worker.close();
  });

  it("shows the queue's schedulers, runs one now, and reads Redis's stats", async () => {
    const name = env.queueName('bbs');
    const queue = env.queue(name);
    await queue.upsertJobScheduler('digest', { pattern: '0 7 * * *', tz: 'Europe/Paris' }, { name: 'digest', data: { kind: 'daily' } });
    const api = await board(name);
    const schedulers = await api('GET', `/job-schedulers`);
    expect(schedulers.status).toBe(200);
    expect(JSON.stringify(schedulers.json)).toContain('digest');
    const before = (await queue.getJobCounts('waiting')).waiting;
    const run = await api('PUT', `/queues/${name}/job-schedulers/digest/run`);
    expect(run.status).toBeLessThan(300);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(before + 1);
    const stats = await api('GET', `/redis/stats`);
    expect(stats.status).toBe(200);
    expect(JSON.stringify(stats.json)).toMatch(/"version":"7\./);
  });
});
