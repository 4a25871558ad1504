/**
 * The dashboard's HTTP API through a real Node server on loopback: authentication, roles, the
 * CSRF defence, security headers, reads, actions with their audit log, redaction, the live
 * stream, and the standalone command's secure defaults.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { createDashboard, toNodeListener, type Dashboard, type DashboardOptions } from '../src/index.js';
import { runStandalone } from '../src/standalone.js';

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

async function serve(extra: Partial<DashboardOptions> = {}) {
  const dashboard = createDashboard({
    connection: env.url,
    prefix: env.prefix,
    basePath: '/hopper/',
    auth: {
      tokens: [
        { token: OPERATOR, name: 'ops' },
        { token: VIEWER, role: 'viewer', name: 'support' },
      ],
    },
    ...extra,
  });
  const server = createServer(toNodeListener(dashboard));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running = { server, dashboard };
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (
    method: string,
    path: string,
    opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? OPERATOR}`;
    if (method === 'POST' && !('x-hopper-csrf' in headers)) headers['x-hopper-csrf'] = '1';
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${origin}/hopper/${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> & unknown[] };
  };
  return { call, origin };
}

describe('dashboard API', () => {
  it('refuses to start without an auth setting, and every route without credentials', async () => {
    expect(() => createDashboard({ connection: env.url } as DashboardOptions)).toThrow(/needs an `auth` setting/);
    expect(() => createDashboard({ connection: env.url, auth: { tokens: [{ token: 'short' }] } })).toThrow(/16 characters/);
    const { call } = await serve();
    const anonymous = await call('GET', 'api/queues', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="Hopper dashboard"');
    expect((await call('GET', 'api/queues', { token: 'wrong-token-0123456789' })).status).toBe(401);
    const ok = await call('GET', 'api/queues');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(ok.headers.get('x-frame-options')).toBe('DENY');
    expect(ok.headers.get('content-type')).toContain('application/json');
  });

  it('lists queues, pages jobs, shows a job with secrets redacted and hostile content as plain JSON', async () => {
    const name = env.queueName('mail');
    const queue = env.queue(name);
    const hostile = '<img src=x onerror=alert(1)></script>';
    await queue.add(hostile, { to: 'a@x', password: 'hunter2', nested: { apiKey: 'k-123' } }, { jobId: 'j1' });
    await queue.addBulk(Array.from({ length: 30 }, (_, i) => ({ name: 'bulk', data: { i } })));
    const { call } = await serve();
    const overview = await call('GET', 'api/queues');
    expect(overview.body).toEqual([expect.objectContaining({ name, counts: expect.objectContaining({ waiting: 31 }) as unknown })]);
    const page = await call('GET', `api/queues/${name}/jobs?state=waiting&offset=10&limit=10`);
    expect(page.body).toMatchObject({ total: 31, offset: 10, limit: 10 });
    expect((page.body.jobs as unknown[]).length).toBe(10);
    const job = await call('GET', `api/queues/${name}/jobs/j1`);
    expect(job.body).toMatchObject({
      name: hostile,
      state: 'waiting',
      data: { to: 'a@x', password: '[redacted]', nested: { apiKey: '[redacted]' } },
    });
    expect((await call('GET', `api/queues/${name}/jobs?state=nope`)).status).toBe(400);
    expect((await call('GET', `api/queues/${name}/jobs/missing`)).status).toBe(404);
    expect((await call('GET', 'api/queues/no-such-queue/jobs')).status).toBe(404);
  });

  it('acts only for operators, only with the CSRF header and from its own origin, and audits each action', async () => {
    const name = env.queueName('acts');
    const queue = env.queue(name);
    await queue.add('bad', {}, { jobId: 'b1' });
    const worker = env.worker(name, async () => {
      throw new Error('boom');
    });
    await collect(worker, 'failed', 1);
    await worker.close();
    const { call, origin } = await serve();
    const viewer = await call('POST', `api/queues/${name}/jobs/b1/retry`, { token: VIEWER });
    expect(viewer.status).toBe(403);
    expect(String(viewer.body.error)).toContain('viewer');
    const noHeader = await call('POST', `api/queues/${name}/jobs/b1/retry`, { headers: { 'x-hopper-csrf': '0' } });
    expect(noHeader.status).toBe(403);
    const crossSite = await call('POST', `api/queues/${name}/jobs/b1/retry`, { headers: { origin: 'https://evil.example' } });
    expect(crossSite.status).toBe(403);
    expect(await queue.getJobState('b1')).toBe('failed'); // nothing changed
    expect((await call('GET', `api/queues/${name}/jobs/b1/retry`)).status).toBe(405); // GET never acts

    const retried = await call('POST', `api/queues/${name}/jobs/b1/retry`, { headers: { origin } });
    expect(retried.status).toBe(200);
    expect(await queue.getJobState('b1')).toBe('waiting');
    expect((await call('POST', `api/queues/${name}/pause`)).status).toBe(200);
    expect(await queue.isPaused()).toBe(true);
    const conflict = await call('POST', `api/queues/${name}/jobs/b1/retry`);
    expect(conflict.status).toBe(409);
    // Every action reached is audited, done or not (newest first): the refusals and the conflict too.
    const audit = await call('GET', 'api/audit');
    type Entry = { who: string; action: string; target: string; outcome: string; status: number };
    expect((audit.body as unknown as Entry[]).map((e) => [e.who, e.action, e.target, e.outcome, e.status])).toEqual([
      ['ops', 'retry', `${name}/b1`, 'failed', 409],
      ['ops', 'pause', name, 'done', 200],
      ['ops', 'retry', `${name}/b1`, 'done', 200],
      ['ops', 'retry', `${name}/b1`, 'refused', 403],
      ['ops', 'retry', `${name}/b1`, 'refused', 403],
      ['support', 'retry', `${name}/b1`, 'refused', 403],
    ]);
  });

  it('streams the overview live over Server-Sent Events until the client goes away', async () => {
    const name = env.queueName('live');
    await env.queue(name).add('x', {});
    const { origin } = await serve({ streamIntervalMs: 100 });
    const controller = new AbortController();
    const res = await fetch(`${origin}/hopper/api/stream`, { headers: { authorization: `Bearer ${OPERATOR}` }, signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += new TextDecoder().decode(chunk);
      if ((text.match(/event: overview/g) ?? []).length >= 2) break;
    }
    expect(text).toContain(`"name":"${name}"`);
    controller.abort();
  });

  it('standalone: listens on loopback with a generated token unless told otherwise', async () => {
    const standalone = await runStandalone(['--port', '0', '--prefix', env.prefix], { REDIS_URL: env.url });
    try {
      expect(standalone.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(standalone.token?.length).toBeGreaterThanOrEqual(32);
      expect((await fetch(`${standalone.url}api/queues`)).status).toBe(401);
      const ok = await fetch(`${standalone.url}api/queues`, { headers: { authorization: `Bearer ${standalone.token}` } });
      expect(ok.status).toBe(200);
    } finally {
      await standalone.stop();
    }
    await expect(runStandalone(['--token', 'x'.repeat(20), '--no-auth'])).rejects.toThrow(/contradict/);
  });
});
