/**
 * Hostile and malformed requests on every mount (Node http, Express, Fastify, the Fetch handler,
 * the standalone server): a bad Host, an absolute-form target, `OPTIONS *`, malformed
 * percent-encoding, `null`/array/invalid JSON bodies, unknown methods and oversized bodies are
 * answered (400, 405, 413) before any route runs, never with a crash, a hang, a stack trace or a
 * file path, and the server keeps serving. Basic auth's 401 names the Basic scheme.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { MOUNT_KINDS, mount, type Mount, type MountKind, type RawRequest, type RawResponse } from './helpers/mounts.js';

const env = useHopper();
const TOKEN = 'hostile-operator-token-0123';
const auth = { authorization: `Bearer ${TOKEN}` };
const mounts: Mount[] = [];
afterEach(async () => {
  for (const m of mounts.splice(0)) await m.close();
});

async function start(kind: MountKind, limits = {}): Promise<Mount> {
  const m = await mount(kind, { connection: env.url, prefix: env.prefix, auth: { tokens: [{ token: TOKEN, name: 'ops' }] }, limits });
  mounts.push(m);
  return m;
}

/** What no reply may contain: a stack frame, a file path, a module directory. */
const LEAK = /\bat .+:\d+:\d+|\/work\/|\/home\/|node_modules|\.ts:\d+|[A-Z]:\\/;

function expectClean(res: RawResponse): void {
  expect(res.text).not.toMatch(LEAK);
  expect(res.status).toBeLessThan(500);
}

/** Sends `req` and returns the reply, or undefined when this mount cannot receive such a request (the Fetch handler). */
async function send(m: Mount, req: RawRequest): Promise<RawResponse | undefined> {
  const res = await m.send(req);
  if (res === 'unsupported') {
    expect(m.kind).toBe('fetch'); // only a Fetch handler is spared them (its server refuses them)
    return undefined;
  }
  expectClean(res);
  return res;
}

async function stillServes(m: Mount): Promise<void> {
  const ok = await m.send({ target: `${m.basePath}api/queues`, headers: { host: m.host, ...auth } });
  expect(ok).not.toBe('unsupported');
  expect((ok as RawResponse).status).toBe(200);
}

describe.each(MOUNT_KINDS)('hostile requests on the %s mount', (kind) => {
  it('a malformed Host, an absolute-form target or OPTIONS * is a 400 before routing: no crash, no hang, no leak', async () => {
    const m = await start(kind);
    const path = `${m.basePath}api/queues`;
    for (const host of ['a b', 'x:99999', 'x:-1', 'exa_mple.com:80:80', '[::1', '[zz]:80', '999.1.1.1', 'a..b', '']) {
      const res = await send(m, { target: path, headers: { host, ...auth } });
      if (res) expect([host, res.status]).toEqual([host, 400]);
    }
    const absolute = await send(m, { target: `http://evil.example${path}`, headers: { host: m.host, ...auth } });
    // The frameworks route an absolute-form target by its path (Express) or not at all (Fastify's 404);
    // where it reaches the dashboard it is a 400.
    if (absolute) expect(kind === 'fastify' ? [400, 404] : [400]).toContain(absolute.status);
    const star = await send(m, { method: 'OPTIONS', target: '*', headers: { host: m.host } });
    // `OPTIONS *` names no path: a framework answers it from its own router (404), never the dashboard.
    if (star) expect(kind === 'express' || kind === 'fastify' ? [400, 404] : [400]).toContain(star.status);
    await stillServes(m);
  });

  it('malformed percent-encoding, null/array/invalid JSON bodies: 400; other methods: 405', async () => {
    const m = await start(kind);
    const name = env.queueName('hq');
    await env.queue(name).add('x', {}, { jobId: 'j1' });
    const h = { host: m.host, ...auth, 'x-hopper-csrf': '1', 'content-type': 'application/json' };
    for (const bad of ['%E0%A4%A', '%zz', '%']) {
      const res = await send(m, { target: `${m.basePath}api/queues/${bad}/jobs`, headers: h });
      expect([bad, res?.status]).toEqual([bad, 400]);
    }
    for (const body of ['null', '[1,2]', '"text"', '42', '{"ids":', '\u0000']) {
      const res = await send(m, { method: 'POST', target: `${m.basePath}api/queues/${name}/bulk`, headers: h, body });
      expect([body, res?.status]).toEqual([body, 400]);
    }
    const invalidUtf8 = await send(m, {
      method: 'POST',
      target: `${m.basePath}api/queues/${name}/bulk`,
      headers: h,
      body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect(invalidUtf8?.status).toBe(400);
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await send(m, { method, target: `${m.basePath}api/queues/${name}/jobs/j1/remove`, headers: h, body: '{}' });
      // Fastify's plugin routes these methods to the dashboard too.
      expect([method, res?.status]).toEqual([method, 405]);
      expect(res?.headers.allow).toBe('GET, HEAD, POST');
    }
    expect(await env.queue(name).getJobState('j1')).toBe('waiting');
    await stillServes(m);
  });

  it('a body over maxBodyBytes is a 413, declared or streamed, and nothing changes', async () => {
    const m = await start(kind, { maxBodyBytes: 4096 });
    const name = env.queueName('hb');
    await env.queue(name).add('x', {}, { jobId: 'j1' });
    const max = kind === 'standalone' ? 1024 * 1024 : 4096; // the standalone server runs with the default limit
    const ids = Array.from({ length: 1000 }, (_, i) => `j1-${i}-${'x'.repeat(Math.ceil(max / 1000))}`);
    const big = JSON.stringify({ action: 'remove', ids: ['j1', ...ids] });
    expect(big.length).toBeGreaterThan(max);
    const h = { host: m.host, ...auth, 'x-hopper-csrf': '1', 'content-type': 'application/json' };
    const declared = await send(m, { method: 'POST', target: `${m.basePath}api/queues/${name}/bulk`, headers: h, body: big });
    expect(declared?.status).toBe(413);
    // Without a Content-Length (chunked): cut off while streaming.
    const chunked = await send(m, {
      method: 'POST',
      target: `${m.basePath}api/queues/${name}/bulk`,
      headers: { ...h, 'transfer-encoding': 'chunked' },
      body: big,
    });
    expect(chunked?.status).toBe(413);
    expect(await env.queue(name).getJobState('j1')).toBe('waiting');
    await stillServes(m);
  });
});

describe.each(MOUNT_KINDS.filter((k) => k !== 'standalone'))('basic auth on the %s mount', (kind) => {
  it("answers 401 with a Basic challenge (the UI's own calls get one the browser does not prompt for)", async () => {
    const m = await mount(kind, { connection: env.url, prefix: env.prefix, auth: { basic: [{ user: 'ada', password: 'lovelace-1843' }] } });
    mounts.push(m);
    const path = `${m.basePath}api/queues`;
    const anonymous = (await m.send({ target: path, headers: { host: m.host } })) as RawResponse;
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="Hopper dashboard", charset="UTF-8"');
    const fromUi = (await m.send({ target: path, headers: { host: m.host, 'x-hopper-ui': '1' } })) as RawResponse;
    expect(fromUi.headers['www-authenticate']).toMatch(/^HopperBasic /);
    const basic = `Basic ${Buffer.from('ada:lovelace-1843').toString('base64')}`;
    expect(((await m.send({ target: path, headers: { host: m.host, authorization: basic } })) as RawResponse).status).toBe(200);
  });
});
