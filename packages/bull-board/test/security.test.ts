/**
 * HopperAdapter's defences through Bull Board's own HTTP API (`@bull-board/express`): read-only by
 * default (every change refused, nothing changed), the dashboard's redaction on every value Bull
 * Board shows (lists, detail, logs, schedulers), no Redis server facts unless asked, edits and
 * copies holding redaction placeholders refused, and bullBoardGuard(): security headers, changes
 * from another origin or as a form (`text/plain`) refused behind a cookie login, same-origin JSON
 * changes accepted, an HTTPS proxy's origin accepted when trusted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import express from 'express';
import { Queue } from 'hopper-queue';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { HopperAdapter, bullBoardGuard, type BullBoardGuardOptions, type HopperAdapterOptions } from '../src/index.js';

const env = useHopper();
let server: Server | undefined;
let adapters: HopperAdapter[] = [];
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await Promise.all(adapters.map((a) => a.close()));
  adapters = [];
});

const COOKIE = 'session=ops-session';

/**
 * Bull Board under /admin/queues behind a cookie "login" (the review's setup), optionally with the
 * guard in front. Returns a request helper (same-origin by default).
 */
async function board(name: string, options: HopperAdapterOptions = {}, guard?: BullBoardGuardOptions) {
  adapters = [new HopperAdapter(env.track(new Queue(name, { connection: env.url, prefix: env.prefix })), options)];
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath('/admin/queues');
  createBullBoard({ queues: adapters, serverAdapter });
  const app = express();
  const login = (req: express.Request, res: express.Response, next: express.NextFunction) =>
    req.headers.cookie === COOKIE ? next() : res.status(401).end();
  if (guard) app.use('/admin/queues', login, bullBoardGuard(guard), serverAdapter.getRouter() as express.Router);
  else app.use('/admin/queues', login, serverAdapter.getRouter() as express.Router);
  server = createServer(app);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${origin}/admin/queues${path}`, {
      method,
      headers: { cookie: COOKIE, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, origin };
  };
}

describe('HopperAdapter defaults', () => {
  it('is read-only: every change Bull Board offers is refused and nothing changes', async () => {
    const name = env.queueName('ro');
    const queue = env.queue(name);
    await queue.add('later', { n: 1 }, { jobId: 'd1', delay: 3_600_000 });
    await queue.add('bad', {}, { jobId: 'f1' });
    const worker = env.worker(name, async (job) => {
      if (job.name === 'bad') throw new Error('boom');
    });
    await collect(worker, 'failed', 1);
    await worker.close();
    await queue.upsertJobScheduler('s', { every: 3_600_000, startDate: Date.now() + 3_600_000 }, { name: 's' });
    const api = await board(name);
    const before = JSON.stringify([await queue.getJobCounts(), await queue.isPaused(), await queue.getJobSchedulersCount()]);
    const changes: [string, string, unknown?][] = [
      ['POST', `/api/queues/${name}/add`, { name: 'x', data: {} }],
      ['PUT', `/api/queues/${name}/f1/retry`],
      ['PUT', `/api/queues/${name}/retry/failed`],
      ['PUT', `/api/queues/${name}/d1/promote`],
      ['PUT', `/api/queues/${name}/promote`],
      ['PUT', `/api/queues/${name}/f1/clean`],
      ['PUT', `/api/queues/${name}/clean/failed`],
      ['PUT', `/api/queues/${name}/pause`],
      ['PUT', `/api/queues/${name}/empty`],
      ['PUT', `/api/queues/${name}/obliterate`],
      ['PUT', `/api/queues/${name}/concurrency`, { concurrency: 3 }],
      ['PATCH', `/api/queues/${name}/d1/update-data`, { jobData: { n: 2 } }],
      ['PATCH', `/api/queues/${name}/d1/delay`, { runAt: Date.now() }],
      ['PUT', `/api/queues/${name}/job-schedulers/s/run`],
      ['PUT', `/api/queues/${name}/job-schedulers/s/remove`],
    ];
    for (const [method, path, body] of changes) {
      const res = await api(method, path, { body: body === undefined ? undefined : JSON.stringify(body) });
      expect([method, path, res.status]).toEqual([method, path, 405]);
    }
    expect(JSON.stringify([await queue.getJobCounts(), await queue.isPaused(), await queue.getJobSchedulersCount()])).toBe(before);
    expect((await queue.getJob('d1'))?.data).toEqual({ n: 1 });
    // The adapter itself refuses too, whatever calls it.
    await expect(adapters[0].obliterate()).rejects.toThrow(/read-only/);
    await expect((await adapters[0].getJob('f1'))!.retry('failed')).rejects.toThrow(/read-only/);
  });

  it("redacts every value Bull Board shows, as the dashboard does, and keeps Redis's server facts to itself", async () => {
    const name = env.queueName('red');
    const queue = env.queue(name);
    await queue.upsertJobScheduler(
      's',
      { every: 3_600_000, startDate: Date.now() + 3_600_000 },
      { name: 's', data: { connectionString: 'sched-secret' } },
    );
    await queue.add('pay', { apiKey: 'k-data-secret', url: 'https://u:url-secret@x.example/' }, { jobId: 'p1' });
    const worker = env.worker(name, async (job) => {
      await job.log('retrying with password=log-secret');
      await job.updateProgress({ cookie: 'progress-secret' });
      throw new Error('failed: Bearer reason-secret-token');
    });
    await collect(worker, 'failed', 1);
    await worker.close();
    const api = await board(name);
    const replies = [
      await api('GET', `/api/queues?activeQueue=${name}&status=failed&page=1&jobsPerPage=10`),
      await api('GET', `/api/queues/${name}/p1`),
      await api('GET', `/api/queues/${name}/p1/logs`),
      await api('GET', '/api/job-schedulers'),
    ];
    for (const res of replies) {
      expect(res.status).toBe(200);
      for (const secret of ['k-data-secret', 'url-secret', 'log-secret', 'progress-secret', 'reason-secret-token', 'sched-secret'])
        expect([secret, res.text.includes(secret)]).toEqual([secret, false]);
    }
    expect(replies[1].text).toContain('[redacted]');
    const stats = await api('GET', '/api/redis/stats');
    expect(stats.status).toBe(404);
    expect(stats.text).not.toMatch(/redis_version|"version"|"os"|"port"/);
  });

  it('with actions on, an edit or a copy holding a redaction placeholder is refused (it would overwrite the secret)', async () => {
    const name = env.queueName('edit');
    const queue = env.queue(name);
    await queue.add('pay', { apiKey: 'k-1', amount: 5 }, { jobId: 'p1', delay: 3_600_000 });
    const api = await board(name, { readOnlyMode: false });
    const shown = JSON.parse((await api('GET', `/api/queues/${name}/p1`)).text) as { job: { data: Record<string, unknown> } };
    expect(shown.job.data).toEqual({ apiKey: '[redacted]', amount: 5 });
    const edit = await api('PATCH', `/api/queues/${name}/p1/update-data`, {
      body: JSON.stringify({ jobData: { ...shown.job.data, amount: 6 } }),
    });
    expect(edit.status).toBe(400);
    const copy = await api('POST', `/api/queues/${name}/add`, { body: JSON.stringify({ name: 'pay', data: shown.job.data }) });
    expect(copy.status).toBe(400);
    expect((await queue.getJob('p1'))?.data).toEqual({ apiKey: 'k-1', amount: 5 });
    expect(await queue.count()).toBe(1);
    // An edit without placeholders goes through.
    expect((await api('PATCH', `/api/queues/${name}/p1/update-data`, { body: JSON.stringify({ jobData: { amount: 7 } }) })).status).toBe(
      200,
    );
    expect((await queue.getJob('p1'))?.data).toEqual({ amount: 7 });
  });
});

describe('bullBoardGuard', () => {
  it('adds security headers; refuses a cross-site form post or another origin behind a cookie login; accepts same-origin JSON', async () => {
    const name = env.queueName('guard');
    const queue = env.queue(name);
    // Without the guard (the review's finding): a cross-site text/plain POST adds a job.
    const open = await board(name, { readOnlyMode: false });
    const crossSite = { 'content-type': 'text/plain', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
    const unguarded = await open('POST', `/api/queues/${name}/add`, { body: '{"name":"x","data":{}}', headers: crossSite });
    expect(unguarded.status).toBe(200);
    expect(await queue.count()).toBe(1);
    await new Promise((resolve) => {
      server!.closeAllConnections();
      server!.close(resolve);
    });
    server = undefined;

    const api = await board(name, { readOnlyMode: false }, {});
    const page = await api('GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const refused: Record<string, string>[] = [
      crossSite,
      { 'content-type': 'text/plain' }, // a form-like body, even without an Origin
      { 'content-type': 'application/json', origin: 'https://evil.example' },
      { 'content-type': 'application/json', origin: 'null' },
      { 'content-type': 'application/json', 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of refused) {
      const res = await api('POST', `/api/queues/${name}/add`, { body: '{"name":"x","data":{}}', headers });
      expect([headers, res.status >= 400 && res.status < 500]).toEqual([headers, true]);
    }
    expect((await api('PUT', `/api/queues/${name}/pause`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect(await queue.count()).toBe(1);
    expect(await queue.isPaused()).toBe(false);
    const own = await api('POST', `/api/queues/${name}/add`, { body: '{"name":"x","data":{}}', headers: { origin: page.origin } });
    expect(own.status).toBe(200);
    expect(await queue.count()).toBe(2);
  });

  it('behind an HTTPS proxy: the forwarded origin is accepted when trusted, refused otherwise', async () => {
    const name = env.queueName('proxy');
    const queue = env.queue(name);
    const forwarded = { origin: 'https://ops.example.com', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ops.example.com' };
    let api = await board(name, { readOnlyMode: false }, {});
    expect((await api('PUT', `/api/queues/${name}/pause`, { headers: forwarded })).status).toBe(403);
    await new Promise((resolve) => {
      server!.closeAllConnections();
      server!.close(resolve);
    });
    server = undefined;
    api = await board(name, { readOnlyMode: false }, { trustProxy: true });
    expect((await api('PUT', `/api/queues/${name}/pause`, { headers: forwarded })).status).toBe(200);
    expect(await queue.isPaused()).toBe(true);
  });
});
