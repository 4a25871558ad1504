/**
 * Who the dashboard answers and whose changes it accepts, on every mount: the Host allow-list
 * (DNS rebinding: a page that points its own name at the dashboard's address is refused, by
 * default for `auth: false` and the standalone server), and, behind an HTTPS-terminating proxy,
 * the trusted-proxy and allowed-origins settings that let the browser's `Origin: https://...`
 * act while a cross-site or `null` origin is still refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import type { DashboardOptions } from '../src/index.js';
import { MOUNT_KINDS, mount, type Mount, type MountKind, type RawResponse } from './helpers/mounts.js';

const env = useHopper();
const TOKEN = 'proxy-operator-token-0123456';
const mounts: Mount[] = [];
afterEach(async () => {
  for (const m of mounts.splice(0)) await m.close();
});

async function start(kind: MountKind, options: Partial<DashboardOptions>, flags: string[]): Promise<Mount> {
  const m = await mount(kind, { connection: env.url, prefix: env.prefix, auth: { tokens: [{ token: TOKEN }] }, ...options }, flags);
  mounts.push(m);
  return m;
}

async function get(m: Mount, host: string, headers: Record<string, string> = {}): Promise<number> {
  const res = (await m.send({ target: `${m.basePath}api/queues`, headers: { host, ...headers } })) as RawResponse;
  return res.status;
}

/** A failed job to retry: a change whose effect is visible. */
async function failedJob(): Promise<{ name: string; state: () => Promise<string> }> {
  const name = env.queueName('px');
  const queue = env.queue(name);
  await queue.add('bad', {}, { jobId: 'b1' });
  const worker = env.worker(name, async () => {
    throw new Error('boom');
  });
  await collect(worker, 'failed', 1);
  await worker.close();
  return { name, state: () => queue.getJobState('b1') };
}

describe.each(MOUNT_KINDS)('hosts and origins on the %s mount', (kind) => {
  it('auth: false answers only loopback host names by default: a rebinding page reads nothing and changes nothing', async () => {
    const m = await start(kind, { auth: false }, ['--no-auth']);
    const port = m.host.includes(':') ? m.host.slice(m.host.lastIndexOf(':')) : '';
    const job = await failedJob();
    for (const host of [`localhost${port}`, `127.0.0.1${port}`, `app.localhost${port}`, `127.0.0.2${port}`])
      expect([host, await get(m, host)]).toEqual([host, 200]);
    expect(await get(m, `[::1]${port}`)).toBe(200);
    for (const host of [`attacker.example${port}`, `10.0.0.5${port}`, `localhost.attacker.example${port}`])
      expect([host, await get(m, host)]).toEqual([host, 400]);
    // The rebinding page's change (its own origin, as the browser sees it): refused before anything runs.
    const act = (await m.send({
      method: 'POST',
      target: `${m.basePath}api/queues/${job.name}/jobs/b1/retry`,
      headers: { host: `attacker.example${port}`, origin: `http://attacker.example${port}`, 'x-hopper-csrf': '1' },
      body: '{}',
    })) as RawResponse;
    expect(act.status).toBe(400);
    expect(await job.state()).toBe('failed');
  });

  it('allowedHosts (--allowed-host) names the hosts served; others are a 400', async () => {
    const m = await start(kind, { allowedHosts: ['ops.example.com', '.internal.example'] }, [
      '--allowed-host',
      'ops.example.com',
      '--allowed-host',
      '.internal.example',
    ]);
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect(await get(m, 'ops.example.com', auth)).toBe(200);
    expect(await get(m, 'OPS.Example.com:8443', auth)).toBe(200);
    expect(await get(m, 'a.internal.example', auth)).toBe(200);
    expect(await get(m, 'evil.example', auth)).toBe(400);
    expect(await get(m, 'ops.example.com.evil.example', auth)).toBe(400);
  });

  it("behind an HTTPS proxy: trustProxy makes the browser's https Origin its own; a foreign or null Origin is still refused", async () => {
    const job = await failedJob();
    const send = async (m: Mount, origin: string, extra: Record<string, string>) =>
      (
        (await m.send({
          method: 'POST',
          target: `${m.basePath}api/queues/${job.name}/jobs/b1/promote`,
          headers: { host: m.host, authorization: `Bearer ${TOKEN}`, 'x-hopper-csrf': '1', origin, ...extra },
          body: '{}',
        })) as RawResponse
      ).status;
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ops.example.com', 'x-forwarded-for': '203.0.113.7' };
    // Without the setting, the proxy's https origin is another origin: refused (the review's finding).
    const plain = await start(kind, { allowedHosts: ['*'] }, ['--allowed-host', '*']);
    expect(await send(plain, 'https://ops.example.com', forwarded)).toBe(403);
    await plain.close();
    mounts.splice(mounts.indexOf(plain), 1);

    const behind = await start(kind, { allowedHosts: ['ops.example.com'], trustProxy: true }, [
      '--allowed-host',
      'ops.example.com',
      '--trust-proxy',
      '1',
    ]);
    // promote answers 409 (the job is failed, not delayed) once past the CSRF checks: the origin was accepted.
    expect(await send(behind, 'https://ops.example.com', forwarded)).toBe(409);
    expect(await send(behind, 'http://ops.example.com', forwarded)).toBe(403); // the scheme counts
    expect(await send(behind, 'https://evil.example', forwarded)).toBe(403);
    expect(await send(behind, 'null', forwarded)).toBe(403);
    // A forwarded host that is not allowed, or a malformed forwarded protocol: 400.
    expect(await send(behind, 'https://evil.example', { ...forwarded, 'x-forwarded-host': 'evil.example' })).toBe(400);
    expect(await send(behind, 'https://ops.example.com', { ...forwarded, 'x-forwarded-proto': 'gopher' })).toBe(400);
    // With two proxies' entries, the one nearest to this server wins (a client's own entry comes first).
    expect(await send(behind, 'https://ops.example.com', { ...forwarded, 'x-forwarded-host': 'evil.example, ops.example.com' })).toBe(409);
    expect(await job.state()).toBe('failed');
  });

  it('allowedOrigins (--allowed-origin) accepts a named origin without trusting any proxy header', async () => {
    const job = await failedJob();
    const m = await start(kind, { allowedOrigins: ['https://ops.example.com'] }, ['--allowed-origin', 'https://ops.example.com']);
    const retry = async (origin: string) =>
      (
        (await m.send({
          method: 'POST',
          target: `${m.basePath}api/queues/${job.name}/jobs/b1/retry`,
          headers: { host: m.host, authorization: `Bearer ${TOKEN}`, 'x-hopper-csrf': '1', origin },
          body: '{}',
        })) as RawResponse
      ).status;
    expect(await retry('https://evil.example')).toBe(403);
    expect(await retry('null')).toBe(403);
    expect(await job.state()).toBe('failed');
    expect(await retry('https://ops.example.com')).toBe(200);
    expect(await job.state()).not.toBe('failed');
  });
});
