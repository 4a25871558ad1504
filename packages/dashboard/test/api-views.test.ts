/**
 * The API routes behind the UI's views: search (bounded slices with a cursor), per-minute series
 * and latency percentiles, groups, dead letters, settings, duplicate and bulk actions, each
 * change refused without the operator role, the CSRF header or from another origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MetricsTime } from 'hopper-queue';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { createDashboard, toNodeListener, type Dashboard } from '../src/index.js';

const env = useHopper();
const OPERATOR = 'operator-token-0123456789';
const VIEWER = 'viewer-token-0123456789ab';
let running: { server: Server; dashboard: Dashboard } | undefined;

afterEach(async () => {
  if (!running) return;
  await running.dashboard.close();
  running.server.closeAllConnections();
  await new Promise((resolve) => running!.server.close(resolve));
  running = undefined;
});

type Body = Record<string, unknown> & { jobs: { id: string; name: string; state?: string }[] };

async function serve() {
  const dashboard = createDashboard({
    connection: env.url,
    prefix: env.prefix,
    auth: {
      tokens: [
        { token: OPERATOR, name: 'ops' },
        { token: VIEWER, role: 'viewer' },
      ],
    },
  });
  const server = createServer(toNodeListener(dashboard));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running = { server, dashboard };
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.token ?? OPERATOR}`, ...opts.headers };
    if (method === 'POST' && !('x-hopper-csrf' in headers)) headers['x-hopper-csrf'] = '1';
    const res = await fetch(`${origin}/${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    return { status: res.status, body: (await res.json()) as Body };
  };
}

/** Every change route refuses a viewer, a missing CSRF header and another origin, changing nothing. */
async function refusals(call: Awaited<ReturnType<typeof serve>>, path: string, body: unknown): Promise<void> {
  expect((await call('POST', path, { token: VIEWER, body })).status).toBe(403);
  expect((await call('POST', path, { body, headers: { 'x-hopper-csrf': '' } })).status).toBe(403);
  expect((await call('POST', path, { body, headers: { origin: 'https://evil.example' } })).status).toBe(403);
  expect((await call('POST', path, { token: 'nobody-0123456789abcdef', body })).status).toBe(401);
}

describe('dashboard API behind the views', () => {
  it('searches by id, name, data and failed reason in bounded slices, with progress', async () => {
    const name = env.queueName('s');
    const queue = env.queue(name);
    await queue.addBulk(
      Array.from({ length: 1200 }, (_, i) => ({ name: i % 100 === 7 ? 'invoice' : 'mail', data: { customer: `c-${i}` } })),
    );
    await queue.add('special', { note: 'needle-in-data' }, { jobId: 'wanted-id' });
    const call = await serve();
    // An exact id is found at once, whatever the slice.
    const byId = await call('GET', `api/queues/${name}/search?q=wanted-id&field=id&scan=10`);
    expect(byId.body.jobs[0]).toMatchObject({ id: 'wanted-id', state: 'waiting' });
    // Names: 12 invoices among 1,201 jobs, found slice by slice (at most `scan` jobs per call).
    let cursor: number | null = 0;
    const found: string[] = [];
    let calls = 0;
    while (cursor !== null) {
      const page = await call('GET', `api/queues/${name}/search?q=INVOICE&field=name&scan=500&cursor=${cursor}`);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(1201);
      found.push(...page.body.jobs.map((j) => j.name));
      cursor = page.body.cursor as number | null;
      calls++;
    }
    expect(calls).toBe(3);
    expect(found).toEqual(Array(12).fill('invoice'));
    const data = await call('GET', `api/queues/${name}/search?q=needle-in&field=data&scan=5000`);
    expect(data.body.jobs.map((j) => j.id)).toEqual(['wanted-id']);
    expect((await call('GET', `api/queues/${name}/search?q=&field=data`)).status).toBe(400);
    expect((await call('GET', `api/queues/${name}/search?q=x&field=nope`)).status).toBe(400);
    expect((await call('GET', `api/queues/${name}/search?q=x&scan=999999`)).status).toBe(400);

    // Failed reasons.
    const worker = env.worker(name, async (job) => {
      if (job.name === 'invoice') throw new Error(`card declined for ${(job.data as { customer: string }).customer}`);
    });
    await collect(worker, 'failed', 12);
    await worker.close();
    const reason = await call('GET', `api/queues/${name}/search?q=declined%20for%20c-107&field=reason&state=failed&scan=5000`);
    expect(reason.body.jobs.map((j) => j.name)).toEqual(['invoice']);
  });

  it('per-minute series from worker metrics, else from the finished jobs kept; wait and run percentiles', async () => {
    const name = env.queueName('series');
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'x', data: { i } })));
    const worker = env.worker(name, async (job) => {
      if ((job.data as { i: number }).i % 4 === 0) throw new Error('every fourth fails');
    });
    await collect(worker, 'completed', 15);
    await worker.close();
    const call = await serve();
    const series = await call('GET', `api/queues/${name}/series?minutes=30`);
    expect(series.body).toMatchObject({ source: 'sample' });
    const completed = series.body.completed as number[];
    const failed = series.body.failed as number[];
    expect(completed.length).toBe(30);
    expect(completed.reduce((a, b) => a + b, 0)).toBe(15);
    expect(failed.reduce((a, b) => a + b, 0)).toBe(5);
    const latency = series.body.latency as Record<string, number>;
    expect(latency.sample).toBe(15);
    expect(latency.runP95).toBeGreaterThanOrEqual(latency.runP50);
    expect(latency.waitP95).toBeGreaterThanOrEqual(latency.waitP50);
    expect((await call('GET', `api/queues/${name}/series?minutes=5000`)).status).toBe(400);

    // With the workers' metrics option, the stored per-minute counts are used.
    const metered = env.queueName('metered');
    const q2 = env.queue(metered);
    await q2.add('x', {});
    const w2 = env.worker(metered, async () => undefined, { metrics: { maxDataPoints: MetricsTime.ONE_HOUR } });
    await collect(w2, 'completed', 1);
    await w2.close(); // flushes the counts
    const fromMetrics = await call('GET', `api/queues/${metered}/series?minutes=10`);
    expect(fromMetrics.body.source).toBe('metrics');
  });

  it('duplicates a job without its id; bulk-retries a selection, reporting refusals', async () => {
    const name = env.queueName('dup');
    const queue = env.queue(name);
    await queue.add('charge', { amount: 5 }, { jobId: 'orig', attempts: 3, priority: 2 });
    const call = await serve();
    await refusals(call, `api/queues/${name}/jobs/orig/duplicate`, {});
    const dup = await call('POST', `api/queues/${name}/jobs/orig/duplicate`);
    expect(dup.status).toBe(200);
    const copy = await queue.getJob(String(dup.body.jobId));
    expect(copy?.id).not.toBe('orig');
    expect(copy).toMatchObject({
      name: 'charge',
      data: { amount: 5 },
      opts: expect.objectContaining({ attempts: 3, priority: 2 }) as unknown,
    });

    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'bad', data: { i }, opts: { jobId: `b${i}` } })));
    let healed = false;
    const worker = env.worker(name, async (job) => {
      if (job.name === 'bad' && !healed) throw new Error('not yet');
    });
    await collect(worker, 'failed', 3);
    await refusals(call, `api/queues/${name}/bulk`, { action: 'retry', ids: ['b1'] });
    expect(await queue.getJobState('b1')).toBe('failed');
    healed = true;
    const done = collect(worker, 'completed', 3);
    const bulk = await call('POST', `api/queues/${name}/bulk`, { body: { action: 'retry', ids: ['b1', 'b2', 'b3', 'nope'] } });
    expect(bulk.body).toMatchObject({
      action: 'retry',
      done: 3,
      failed: [{ id: 'nope', error: expect.stringContaining('No job') as unknown }],
    });
    await done;
    expect((await call('POST', `api/queues/${name}/bulk`, { body: { action: 'explode', ids: ['b1'] } })).status).toBe(400);
    expect((await call('POST', `api/queues/${name}/bulk`, { body: { action: 'remove', ids: [] } })).status).toBe(400);
    const audit = (await call('GET', 'api/audit')).body as unknown as { action: string; outcome: string; ids?: string[] }[];
    expect(audit.filter((e) => e.outcome === 'done').map((e) => e.action)).toEqual(['bulk', 'duplicate']);
    expect(audit.find((e) => e.outcome === 'done' && e.action === 'bulk')?.ids).toEqual(['b1', 'b2', 'b3', 'nope']);
    // Refused (403: viewer, CSRF, origin) and failed (400) attempts are there too.
    expect(audit.filter((e) => e.outcome === 'refused').length).toBe(6);
    expect(audit.filter((e) => e.outcome === 'failed').map((e) => e.action)).toEqual(['bulk', 'bulk']);
  });

  it('settings: reads and changes global concurrency and rate limit; refuses bad values', async () => {
    const name = env.queueName('set');
    const queue = env.queue(name);
    await queue.add('x', {});
    const call = await serve();
    await refusals(call, `api/queues/${name}/settings`, { globalConcurrency: 2 });
    expect(await queue.getGlobalConcurrency()).toBeNull();
    const set = await call('POST', `api/queues/${name}/settings`, {
      body: { globalConcurrency: 4, rateLimit: { max: 10, duration: 1000 } },
    });
    expect(set.body).toMatchObject({ globalConcurrency: 4, rateLimit: { max: 10, duration: 1000 } });
    expect((await call('GET', `api/queues/${name}/settings`)).body).toMatchObject({ paused: false, globalConcurrency: 4 });
    expect((await call('POST', `api/queues/${name}/settings`, { body: { globalConcurrency: -1 } })).status).toBe(400);
    expect((await call('POST', `api/queues/${name}/settings`, { body: { rateLimit: { max: 'x' } } })).status).toBe(400);
    await call('POST', `api/queues/${name}/settings`, { body: { globalConcurrency: null, rateLimit: null } });
    expect(await queue.getGlobalConcurrency()).toBeNull();
    expect(await queue.getGlobalRateLimit()).toBeNull();
    // Scheduler templates are redacted like jobs.
    await queue.upsertJobScheduler('sync', { every: 60_000 }, { name: 'sync', data: { apiKey: 'k-1', region: 'eu' } });
    const schedulers = await call('GET', `api/queues/${name}/schedulers`);
    expect((schedulers.body as unknown as { template: { data: unknown } }[])[0].template.data).toEqual({
      apiKey: '[redacted]',
      region: 'eu',
    });
  });

  it('groups: lists them and pauses one; dead letters: lists them with filters', async () => {
    const name = env.queueName('g');
    const queue = env.queue(name);
    await queue.addBulk([
      { name: 'a', data: {}, opts: { group: { id: 'tenant-1' } } },
      { name: 'b', data: {}, opts: { group: { id: 'tenant-2' } } },
    ]);
    const call = await serve();
    const groups = await call('GET', `api/queues/${name}/groups`);
    expect(groups.body.total).toBe(2);
    await refusals(call, `api/queues/${name}/groups/tenant-1/pause`, {});
    expect((await call('POST', `api/queues/${name}/groups/tenant-1/pause`)).body).toEqual({ changed: true });
    expect((await queue.getGroup('tenant-1'))?.status).toBe('paused');

    const origin = env.queueName('orig');
    const dlq = env.queueName('dlq');
    env.queue(dlq);
    const source = env.queue(origin, { deadLetter: { queue: dlq } });
    await source.addBulk([
      { name: 'pay', data: {}, opts: { jobId: 'p1' } },
      { name: 'ship', data: {}, opts: { jobId: 's1' } },
    ]);
    const worker = env.worker(origin, async (job) => {
      throw new Error(job.name === 'pay' ? 'gateway timeout' : 'address invalid');
    });
    await collect(worker, 'failed', 2);
    await worker.close();
    const all = await call('GET', `api/queues/${dlq}/dead-letters?state=waiting`);
    expect(all.body.jobs.map((j) => j.name).sort()).toEqual(['pay', 'ship']);
    const filtered = await call('GET', `api/queues/${dlq}/dead-letters?state=waiting&reason=timeout`);
    expect(filtered.body.jobs.map((j) => j.name)).toEqual(['pay']);
    expect(filtered.body.jobs[0]).toMatchObject({ deadLetterOrigin: { queue: origin, jobId: 'p1' } });
    await refusals(call, `api/queues/${dlq}/dead-letters/replay`, { ids: [filtered.body.jobs[0].id] });
    expect(await source.getJobState('p1')).toBe('failed');
  });

  it('job detail: the streamed output as stored, JSON chunks redacted, hostile text kept as text', async () => {
    const name = env.queueName('output');
    const queue = env.queue(name);
    const worker = env.worker(name, async (job) => {
      if (job.name !== 'gen') return;
      await job.stream.write('<img src=x onerror=alert(1)> ');
      await job.stream.write({ password: 'hunter2', words: 12 });
      await job.stream.end();
    });
    const done = collect(worker, 'completed', 2);
    await queue.add('gen', {}, { jobId: 'g1' });
    await queue.add('quiet', {}, { jobId: 'q1' });
    await done;
    const call = await serve();
    const res = await call('GET', `api/queues/${name}/jobs/g1`);
    expect(res.body.output).toEqual({
      chunks: [
        { id: expect.stringMatching(/^\d+-\d+$/) as unknown, attempt: 1, data: '<img src=x onerror=alert(1)> ' },
        { id: expect.stringMatching(/^\d+-\d+$/) as unknown, attempt: 1, data: { password: '[redacted]', words: 12 } },
      ],
      truncated: false,
    });
    expect((await call('GET', `api/queues/${name}/jobs/q1`)).body.output).toEqual({ chunks: [], truncated: false });
  });

  it('job detail: steps, children, logs; pages sorted oldest or newest first', async () => {
    const name = env.queueName('detail');
    const queue = env.queue(name);
    const flows = env.flows();
    await flows.add({
      name: 'parent',
      queueName: name,
      opts: { jobId: 'par' },
      children: [{ name: 'kid', queueName: name, data: {}, opts: { jobId: 'kid1' } }],
    });
    await queue.addJobLog('kid1', 'hello <b>log</b>');
    const call = await serve();
    const parent = await call('GET', `api/queues/${name}/jobs/par`);
    expect(parent.body).toMatchObject({
      state: 'waiting-children',
      children: { pending: [expect.stringContaining('kid1')], pendingTotal: 1 },
    });
    const kid = await call('GET', `api/queues/${name}/jobs/kid1`);
    expect(kid.body).toMatchObject({ logs: ['hello <b>log</b>'], steps: [], parentKey: expect.stringContaining('par') as unknown });
    await queue.add('later', {}, { jobId: 'later' });
    const newest = await call('GET', `api/queues/${name}/jobs?state=waiting&order=desc`);
    const oldest = await call('GET', `api/queues/${name}/jobs?state=waiting&order=asc`);
    expect(newest.body.jobs.map((j) => j.id)).toEqual([...oldest.body.jobs.map((j) => j.id)].reverse());
    expect((await call('GET', `api/queues/${name}/jobs?order=sideways`)).status).toBe(400);
  });
});
