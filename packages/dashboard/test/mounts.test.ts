/**
 * The UI and API mounted under a base path in each kind of server: Node http, Express, Fastify
 * (plugin under a prefix) and a Fetch-style handler. Each serves the page (with its CSP), its
 * hashed assets with their content types and a year of caching, redirects the bare base path,
 * and accepts a change with a JSON body.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { createDashboard, fastifyDashboard, toNodeListener, type Dashboard } from '../src/index.js';

const env = useHopper();
const TOKEN = 'mount-token-0123456789abc';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function dashboardAt(basePath: string): Dashboard {
  const dashboard = createDashboard({ connection: env.url, prefix: env.prefix, basePath, auth: { tokens: [{ token: TOKEN }] } });
  closers.push(() => dashboard.close());
  return dashboard;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The checks every mount must pass; `base` is the full URL of the base path without its slash. */
async function checkMount(base: string): Promise<void> {
  const name = env.queueName('m');
  await env.queue(name).add('x', { n: 1 }, { jobId: 'j1' });
  const bare = await fetch(base, { redirect: 'manual' });
  expect([301, 302, 307, 308]).toContain(bare.status);
  expect(bare.headers.get('location')).toMatch(/\/$/);
  const page = await fetch(`${base}/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(page.headers.get('cache-control')).toBe('no-store');
  const html = await page.text();
  expect(html).not.toMatch(/<script>|<style>|style=/); // nothing inline: the CSP would block it
  const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => m[1]);
  expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
  expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
  for (const asset of assets) {
    const res = await fetch(`${base}/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain(asset.endsWith('.js') ? 'text/javascript' : 'text/css');
    expect(res.headers.get('cache-control')).toContain('immutable');
    await res.arrayBuffer();
  }
  expect((await fetch(`${base}/assets/../../package.json`)).status).toBe(404);
  expect((await fetch(`${base}/api/queues`)).status).toBe(401);
  const auth = { authorization: `Bearer ${TOKEN}` };
  const queues = (await (await fetch(`${base}/api/queues`, { headers: auth })).json()) as { name: string }[];
  expect(queues.map((q) => q.name)).toContain(name);
  const cancel = await fetch(`${base}/api/queues/${name}/jobs/j1/cancel`, {
    method: 'POST',
    headers: { ...auth, 'x-hopper-csrf': '1', 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'mount test' }),
  });
  expect(cancel.status).toBe(200);
  expect(await env.queue(name).getJobState('j1')).not.toBe('waiting');
}

describe('mounts under a base path', () => {
  it('Node http', async () => {
    const origin = await listen(createServer(toNodeListener(dashboardAt('/hopper/'))));
    await checkMount(`${origin}/hopper`);
  });

  it('Express (app.use under a nested path, after express.json())', async () => {
    const app = express();
    app.use(express.json());
    app.use('/ops/hopper', toNodeListener(dashboardAt('/ops/hopper/')));
    const origin = await listen(createServer(app));
    await checkMount(`${origin}/ops/hopper`);
  });

  it('Fastify 5 (plugin under a prefix)', async () => {
    const app = Fastify();
    await app.register(fastifyDashboard(dashboardAt('/admin/queues/')), { prefix: '/admin/queues' });
    app.get('/health', async () => ({ ok: true })); // the app's own routes keep their parsers
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await checkMount(`${origin}/admin/queues`);
    expect(await (await fetch(`${origin}/health`)).json()).toEqual({ ok: true });
  });

  it('Fetch-style handler', async () => {
    const dashboard = dashboardAt('/q/');
    const res = await dashboard.fetch(new Request('http://local/q/'));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<main id="main">');
    expect((await dashboard.fetch(new Request('http://local/elsewhere/'))).status).toBe(404);
  });
});
