/**
 * The security review's checklist, on every route and every mount: no route answers without
 * credentials (401); a viewer changes nothing (403 on every POST); every change needs the CSRF
 * header and is refused from another origin, `Origin: null` included; every reply, errors
 * included, forbids framing (X-Frame-Options, CSP frame-ancestors); static paths cannot leave the
 * built UI; a token is never taken from the URL nor echoed in a reply, an error or the live stream.
 * (XSS on every view: browser.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { MOUNT_KINDS, mount, type Mount, type MountKind, type RawResponse } from './helpers/mounts.js';

const env = useHopper();
const OPERATOR = 'owasp-operator-token-0123456';
const VIEWER = 'owasp-viewer-token-01234567';
const mounts: Mount[] = [];
afterEach(async () => {
  for (const m of mounts.splice(0)) await m.close();
});

/** Every API route, with sample parameters (Q: the queue, J: a job, S: a scheduler, G: a group). */
const ROUTES: [method: 'GET' | 'POST', path: string][] = [
  ['GET', 'api/queues'],
  ['GET', 'api/queues/Q/jobs'],
  ['GET', 'api/queues/Q/jobs/J'],
  ['GET', 'api/queues/Q/search?q=x'],
  ['GET', 'api/queues/Q/series'],
  ['GET', 'api/queues/Q/groups'],
  ['GET', 'api/queues/Q/dead-letters'],
  ['GET', 'api/queues/Q/settings'],
  ['GET', 'api/queues/Q/schedulers'],
  ['GET', 'api/queues/Q/schedulers/S/preview'],
  ['GET', 'api/audit'],
  ['GET', 'api/stream'],
  ['GET', 'metrics'],
  ['POST', 'api/queues/Q/jobs/J/retry'],
  ['POST', 'api/queues/Q/jobs/J/promote'],
  ['POST', 'api/queues/Q/jobs/J/remove'],
  ['POST', 'api/queues/Q/jobs/J/cancel'],
  ['POST', 'api/queues/Q/jobs/J/duplicate'],
  ['POST', 'api/queues/Q/pause'],
  ['POST', 'api/queues/Q/resume'],
  ['POST', 'api/queues/Q/clean'],
  ['POST', 'api/queues/Q/schedulers/S/pause'],
  ['POST', 'api/queues/Q/schedulers/S/resume'],
  ['POST', 'api/queues/Q/schedulers/S/trigger'],
  ['POST', 'api/queues/Q/dead-letters/replay'],
  ['POST', 'api/queues/Q/bulk'],
  ['POST', 'api/queues/Q/settings'],
  ['POST', 'api/queues/Q/groups/G/pause'],
  ['POST', 'api/queues/Q/groups/G/resume'],
];

it('the checklist names every route the dashboard registers', () => {
  const source = ['read-routes.ts', 'action-routes.ts']
    .map((f) => readFileSync(new URL(`../src/${f}`, import.meta.url), 'utf8'))
    .join('\n');
  const registered = [...source.matchAll(/route\(\s*'(GET|POST)',\s*'([^']+)'/g)].map((m) => `${m[1]} ${m[2]}`);
  const listed = new Set(
    ROUTES.map(
      ([method, path]) =>
        `${method} ${path.split('?')[0].replace(/\/Q\b/, '/:queue').replace(/\/J\b/, '/:id').replace(/\/S\b/, '/:id').replace(/\/G\b/, '/:group')}`,
    ),
  );
  // Routes with an `:op` segment are listed once per operation.
  const opRoutes = registered.filter((r) => r.includes(':op'));
  for (const r of registered.filter((x) => !x.includes(':op'))) expect(listed).toContain(r);
  for (const r of opRoutes) expect([...listed].some((l) => l.startsWith(r.replace('/:op', '/')))).toBe(true);
  expect(registered.length).toBeGreaterThanOrEqual(20);
});

async function start(kind: MountKind): Promise<{ m: Mount; queue: string }> {
  const queue = env.queueName('ow');
  const q = env.queue(queue);
  await q.add('x', { password: 'p' }, { jobId: 'J', group: { id: 'G' } });
  await q.upsertJobScheduler('S', { every: 3_600_000, startDate: Date.now() + 3_600_000 }, { name: 's' });
  const m = await mount(kind, {
    connection: env.url,
    prefix: env.prefix,
    auth: {
      tokens: [
        { token: OPERATOR, name: 'ops' },
        { token: VIEWER, role: 'viewer', name: 'support' },
      ],
    },
  });
  mounts.push(m);
  return { m, queue };
}

function frameGuarded(res: RawResponse): void {
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(res.headers['x-content-type-options']).toBe('nosniff');
}

describe.each(MOUNT_KINDS)('the security checklist on the %s mount', (kind) => {
  it('every route: 401 without credentials, 403 for a viewer on changes, CSRF header and Origin (null included) required', async () => {
    const { m, queue } = await start(kind);
    const target = (path: string) => `${m.basePath}${path.replace('/Q/', `/${queue}/`)}`;
    const send = async (method: string, path: string, headers: Record<string, string>) =>
      (await m.send({
        method,
        target: target(path),
        headers: { host: m.host, ...headers },
        body: method === 'POST' ? '{}' : undefined,
      })) as RawResponse;
    const snapshot = async () =>
      JSON.stringify([await env.queue(queue).getJobState('J'), await env.queue(queue).isPaused(), await env.queue(queue).count()]);
    const before = await snapshot();
    for (const [method, path] of ROUTES) {
      const anonymous = await send(method, path, method === 'POST' ? { 'x-hopper-csrf': '1' } : {});
      expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      frameGuarded(anonymous);
      const tokenInUrl = await send(method, `${path}${path.includes('?') ? '&' : '?'}token=${OPERATOR}&access_token=${OPERATOR}`, {});
      expect([method, path, 'token in the URL', tokenInUrl.status]).toEqual([method, path, 'token in the URL', 401]);
      if (method !== 'POST') continue;
      const ops = { authorization: `Bearer ${OPERATOR}` };
      const refusals: [string, Record<string, string>][] = [
        // The standalone server has one token, an operator's: no viewer to refuse there.
        ...(kind === 'standalone'
          ? []
          : [['viewer', { authorization: `Bearer ${VIEWER}`, 'x-hopper-csrf': '1' }] as [string, Record<string, string>]]),
        ['no CSRF header', ops],
        ['wrong CSRF header', { ...ops, 'x-hopper-csrf': 'true' }],
        ['Origin: null', { ...ops, 'x-hopper-csrf': '1', origin: 'null' }],
        ['cross-site Origin', { ...ops, 'x-hopper-csrf': '1', origin: 'https://evil.example' }],
      ];
      for (const [why, headers] of refusals) {
        const res = await send(method, path, headers);
        expect([path, why, res.status]).toEqual([path, why, 403]);
        frameGuarded(res);
      }
    }
    expect(await snapshot()).toBe(before);
  });

  it('every reply forbids framing; static paths stay inside the built UI; no token is echoed', async () => {
    const { m, queue } = await start(kind);
    const get = async (target: string, headers: Record<string, string> = {}) =>
      (await m.send({ target, headers: { host: m.host, ...headers } })) as RawResponse;
    for (const res of [
      await get(m.basePath),
      await get(`${m.basePath}api/queues`, { authorization: `Bearer ${OPERATOR}` }),
      await get(`${m.basePath}api/nope`, { authorization: `Bearer ${OPERATOR}` }),
      await get(`${m.basePath}assets/nope.js`),
    ])
      frameGuarded(res);
    // A malformed URL: Fastify's router answers it itself (its JSON 400, before any plugin runs).
    const malformed = await get(`${m.basePath}api/queues/%zz/jobs`, { authorization: `Bearer ${OPERATOR}` });
    expect(malformed.status).toBe(400);
    if (kind !== 'fastify') frameGuarded(malformed);
    for (const path of [
      'assets/../../package.json',
      'assets/%2e%2e/%2e%2e/package.json',
      'assets/..%2f..%2fpackage.json',
      'assets/..\\..\\package.json',
      '..%2f..%2f..%2fetc/passwd',
      'assets/%252e%252e/package.json',
    ]) {
      const res = await m.send({ target: `${m.basePath}${path}`, headers: { host: m.host } });
      if (res === 'unsupported') continue;
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).not.toMatch(/"name":\s*"hopper-queue-dashboard"|root:x:0/);
    }
    // A wrong token, a viewer's refusal, a bad request: none repeats the credential.
    const wrong = 'wrong-token-that-must-not-echo-0123';
    for (const res of [
      await get(`${m.basePath}api/queues`, { authorization: `Bearer ${wrong}` }),
      (await m.send({
        method: 'POST',
        target: `${m.basePath}api/queues/${queue}/pause`,
        headers: { host: m.host, authorization: `Bearer ${VIEWER}`, 'x-hopper-csrf': '1' },
        body: '{}',
      })) as RawResponse,
      await get(`${m.basePath}api/queues/${queue}/jobs?state=${OPERATOR}`, { authorization: `Bearer ${OPERATOR}` }),
    ]) {
      expect(res.text).not.toContain(wrong);
      expect(res.text).not.toContain(VIEWER);
      expect(JSON.stringify(res.headers)).not.toContain(wrong);
    }
    // The live stream's events carry no credential either.
    const stream = await m.stream({ authorization: `Bearer ${OPERATOR}` });
    expect(await stream.next()).toBe('overview');
    expect(stream.received()).toContain(queue);
    expect(stream.received()).not.toContain(OPERATOR);
    stream.close();
  });
});
