/**
 * What one caller may ask, on every mount: live streams per caller and in all (429 beyond, a slot
 * freed when a stream ends), one overview read per interval however many streams are open (the
 * review's 300 streams drove 12-22k Redis commands/s), requests per minute and at once per caller
 * (429), failed sign-ins per address (429 while locked out, even with the right token), and a live
 * stream that ends when its `authorize` session is revoked.
 */
import { request as httpRequest, type ClientRequest } from 'node:http';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { until } from '../../hopper/test/helpers/wait.js';
import type { DashboardOptions, Principal } from '../src/index.js';
import { Limiter, checkLimits } from '../src/limits.js';
import { MOUNT_KINDS, mount, type Mount, type MountKind, type OpenStream, type RawResponse } from './helpers/mounts.js';

const env = useHopper();
const ALICE = 'limits-alice-token-0123456789';
const BOB = 'limits-bob-token-0123456789ab';
const mounts: Mount[] = [];
const streams: OpenStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const m of mounts.splice(0)) await m.close();
});

async function start(kind: MountKind, options: Partial<DashboardOptions> = {}): Promise<Mount> {
  const m = await mount(kind, {
    connection: env.url,
    prefix: env.prefix,
    auth: {
      tokens: [
        { token: ALICE, role: 'viewer', name: 'alice' },
        { token: BOB, name: 'bob' },
      ],
    },
    ...options,
  });
  mounts.push(m);
  return m;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function open(m: Mount, token: string): Promise<OpenStream> {
  const s = await m.stream({ ...bearer(token) });
  streams.push(s);
  return s;
}

describe.each(MOUNT_KINDS.filter((k) => k !== 'standalone'))('limits on the %s mount', (kind) => {
  it('caps live streams per caller and in all (429 with Retry-After); an ended stream frees its slot', async () => {
    await env.queue(env.queueName('lim')).add('x', {});
    const m = await start(kind, { limits: { streamsPerCaller: 3, streams: 5 }, streamIntervalMs: 100 });
    const mine = [await open(m, ALICE), await open(m, ALICE), await open(m, ALICE)];
    for (const s of mine) {
      expect(s.status).toBe(200);
      expect(await s.next()).toBe('overview');
    }
    const fourth = await open(m, ALICE);
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
    // Another caller has its own allowance, up to the total.
    expect((await open(m, BOB)).status).toBe(200);
    expect((await open(m, BOB)).status).toBe(200);
    expect((await open(m, BOB)).status).toBe(429); // 5 open in all
    mine[0].close();
    await until(async () => {
      const again = await open(m, ALICE);
      if (again.status === 200) return true;
      again.close();
      return false;
    }, 'the closed stream to free its slot');
  });

  it('limits requests per minute per caller (429 with Retry-After), other callers unaffected', async () => {
    const m = await start(kind, { limits: { requestsPerMinute: 5 } });
    const get = async (token: string) =>
      (await m.send({ target: `${m.basePath}api/queues`, headers: { host: m.host, ...bearer(token) } })) as RawResponse;
    for (let i = 0; i < 5; i++) expect((await get(ALICE)).status).toBe(200);
    const refused = await get(ALICE);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await get(BOB)).status).toBe(200);
  });

  it('locks an address out after too many failed sign-ins: 429 even with the right token; other addresses are not', async () => {
    const m = await start(kind, { limits: { failedSignIns: 3 }, trustProxy: true });
    const get = async (token: string, from: string) =>
      (
        (await m.send({
          target: `${m.basePath}api/queues`,
          headers: { host: m.host, ...bearer(token), 'x-forwarded-for': from },
        })) as RawResponse
      ).status;
    for (let i = 0; i < 3; i++) expect(await get(`wrong-token-${i}-0123456789`, '198.51.100.9')).toBe(401);
    expect(await get('wrong-token-again-0123456789', '198.51.100.9')).toBe(429);
    expect(await get(BOB, '198.51.100.9')).toBe(429); // the right token is not even tried
    expect(await get(BOB, '198.51.100.10')).toBe(200);
    // No credentials at all is no guess: not counted, still a 401 elsewhere.
    const anonymous = (await m.send({ target: `${m.basePath}api/queues`, headers: { host: m.host } })) as RawResponse;
    expect(anonymous.status).toBe(401);
  });
});

describe.each(MOUNT_KINDS.filter((k) => k !== 'standalone'))('live streams on the %s mount', (kind) => {
  it('one overview read per interval serves every open stream', async () => {
    const name = env.queueName('shared');
    await env.queue(name).add('x', {});
    const m = await start(kind, { limits: { streamsPerCaller: 40, streams: 40 }, streamIntervalMs: 150 });
    const monitor = new Redis(env.url);
    let commands = 0;
    const mon = await monitor.monitor();
    mon.on('monitor', (_time: string, args: string[]) => {
      if (args.some((a) => a.includes(env.prefix))) commands++;
    });
    try {
      /** Commands on this test's keys while `reader` receives 4 overview events. */
      const during = async (reader: OpenStream): Promise<number> => {
        expect(await reader.next()).toBe('overview');
        const before = commands;
        for (let i = 0; i < 4; i++) expect(await reader.next()).toBe('overview');
        return commands - before;
      };
      const one = await during(await open(m, BOB));
      const many = await Promise.all(Array.from({ length: 29 }, () => open(m, BOB)));
      for (const s of many) expect(s.status).toBe(200);
      const thirty = await during(many[28]);
      expect(one).toBeGreaterThan(0);
      // Without the shared read: 30 times as many. With it: the same, give or take a read.
      expect(thirty).toBeLessThan(one * 2 + 10);
    } finally {
      mon.disconnect();
      monitor.disconnect();
    }
  });

  it('ends a live stream once its authorize session is revoked', async () => {
    const sessions = new Set(['s-1', 's-2']);
    const authorize = (request: Request): Principal | null => {
      const sid = /sid=([\w-]+)/.exec(request.headers.get('cookie') ?? '')?.[1];
      return sid && sessions.has(sid) ? { user: sid, role: 'viewer' } : null;
    };
    const m = await start(kind, { auth: { authorize }, streamIntervalMs: 100, streamRecheckMs: 100 });
    const revoked = await m.stream({ cookie: 'sid=s-1' });
    const kept = await m.stream({ cookie: 'sid=s-2' });
    streams.push(revoked, kept);
    expect(await revoked.next()).toBe('overview');
    sessions.delete('s-1');
    let event: string | null;
    do event = await revoked.next();
    while (event === 'overview');
    expect(event).toBe('end');
    expect(await revoked.next()).toBeNull();
    // The other session's stream goes on.
    expect(await kept.next()).toBe('overview');
    expect(await kept.next()).toBe('overview');
  });
});

describe('a client that stops reading', () => {
  it('has its live stream ended (its slot freed) instead of queueing events for it forever (Fetch handler)', async () => {
    await env.queue(env.queueName('slow')).add('x', {});
    const m = await start('fetch', { limits: { streamsPerCaller: 1 }, streamIntervalMs: 10 });
    const unread = await m.dashboard!.fetch(new Request('http://dashboard.test/hopper/api/stream', { headers: bearer(BOB) }), {
      clientAddress: '127.0.0.1',
    });
    expect(unread.status).toBe(200); // and never read
    expect((await open(m, BOB)).status).toBe(429);
    await until(async () => {
      const again = await open(m, BOB);
      if (again.status === 200) return true;
      again.close();
      return false;
    }, 'the unread stream to be ended');
    await unread.body?.cancel();
  });
});

describe('requests at once', () => {
  it('a caller with requestsInFlight requests still running gets 429 for the next one (Node mount)', async () => {
    const m = await start('node', { limits: { requestsInFlight: 2 } });
    const port = Number(m.host.split(':')[1]);
    const held: ClientRequest[] = [];
    // Two changes whose bodies are still being sent: they hold their slots.
    for (let i = 0; i < 2; i++) {
      const r = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `${m.basePath}api/queues/nope/pause`,
        headers: { ...bearer(BOB), 'x-hopper-csrf': '1', 'content-length': '100' },
        agent: false,
      });
      r.on('error', () => undefined);
      r.write('{');
      held.push(r);
    }
    try {
      await until(
        async () =>
          ((await m.send({ target: `${m.basePath}api/queues`, headers: { host: m.host, ...bearer(BOB) } })) as RawResponse).status === 429,
        'the third request to be refused',
      );
      // Another caller is not held back.
      const other = (await m.send({ target: `${m.basePath}api/queues`, headers: { host: m.host, ...bearer(ALICE) } })) as RawResponse;
      expect(other.status).toBe(200);
    } finally {
      for (const r of held) r.destroy();
    }
    await until(
      async () =>
        ((await m.send({ target: `${m.basePath}api/queues`, headers: { host: m.host, ...bearer(BOB) } })) as RawResponse).status === 200,
      'the slots to be freed once the held requests are gone',
    );
  });
});

describe('Limiter', () => {
  it('ends a lockout after the window, refills the request rate over the minute, and keeps its memory bounded', () => {
    let now = 1_000_000;
    const limiter = new Limiter(checkLimits({ failedSignIns: 2, signInWindowMs: 60_000, requestsPerMinute: 60 }), () => now);
    limiter.failedSignIn('a');
    limiter.failedSignIn('a');
    expect(() => limiter.checkSignIn('a')).toThrow(/Too many failed sign-ins/);
    now += 60_000;
    expect(() => limiter.checkSignIn('a')).not.toThrow();
    for (let i = 0; i < 60; i++) limiter.begin('c')();
    expect(() => limiter.begin('c')).toThrow(/at most 60 a minute/);
    now += 1_000; // one more request's worth
    expect(() => limiter.begin('c')()).not.toThrow();
    for (let i = 0; i < 20_000; i++) limiter.failedSignIn(`addr-${i}`);
    expect((limiter as unknown as { failures: Map<string, unknown> }).failures.size).toBeLessThanOrEqual(10_000);
  });

  it('refuses bad limits at start', () => {
    expect(() => checkLimits({ maxBodyBytes: 0 })).toThrow(/positive integer/);
    expect(() => checkLimits({ nope: 1 } as never)).toThrow(/not a dashboard limit/);
  });
});
