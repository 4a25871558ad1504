/**
 * The standalone `hopper-dashboard` command as a real process (bin/hopper-dashboard.js over the
 * built package): the requests that made it exit (a malformed Host, an absolute-form target,
 * `OPTIONS *`) are answered 400 and it keeps serving; with `--no-auth` it answers only loopback
 * host names (DNS rebinding); bad flags are refused with the usage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { sendRaw, type RawRequest } from './helpers/mounts.js';
import { runStandalone } from '../src/standalone.js';

const env = useHopper();
const BIN = fileURLToPath(new URL('../bin/hopper-dashboard.js', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/standalone.js', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** Starts the command; resolves with its port once it prints its address. */
async function start(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  if (!existsSync(DIST))
    throw new Error('The standalone test runs the built command: run `npm run build -w hopper-queue-dashboard` first.');
  const child = spawn(process.execPath, [BIN, '--port', '0', '--prefix', env.prefix, ...args], {
    env: { ...process.env, REDIS_URL: env.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /on http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`hopper-dashboard exited (${code}) before listening: ${out}`)));
  });
  return { child, port };
}

describe('hopper-dashboard (the real process)', () => {
  it('answers the requests that used to kill it with 400 and keeps serving', async () => {
    const { child, port } = await start(['--token', 'standalone-proc-token-0123456']);
    const host = `127.0.0.1:${port}`;
    const hostile: (RawRequest & { headers: Record<string, string> })[] = [
      { target: '/api/queues', headers: { host: 'a b' } },
      { target: '/api/queues', headers: { host: 'x:99999' } },
      { target: `http://evil.example/api/queues`, headers: { host } },
      { method: 'OPTIONS', target: '*', headers: { host } },
      { target: '/api/queues/%E0%A4%A/jobs', headers: { host, authorization: 'Bearer standalone-proc-token-0123456' } },
    ];
    for (const req of hostile) {
      const res = await sendRaw(port, req);
      expect([req.target, req.headers.host, res.status]).toEqual([req.target, req.headers.host, 400]);
      expect(res.text).not.toMatch(/\bat .+:\d+:\d+|node_modules|\/work\//);
    }
    const ok = await sendRaw(port, { target: '/api/queues', headers: { host, authorization: 'Bearer standalone-proc-token-0123456' } });
    expect(ok.status).toBe(200);
    expect(child.exitCode).toBeNull();
  });

  it('--no-auth answers only loopback host names', async () => {
    const { port } = await start(['--no-auth']);
    expect((await sendRaw(port, { target: '/api/queues', headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await sendRaw(port, { target: '/api/queues', headers: { host: `rebound.attacker.example:${port}` } })).status).toBe(400);
  });

  it('refuses bad flags with the usage', async () => {
    await expect(runStandalone(['--trust-proxy', 'lots'])).rejects.toThrow(/--trust-proxy.*Usage/);
    await expect(runStandalone(['--allowed-host', 'http://x.example/'])).rejects.toThrow(/--allowed-host/);
    await expect(runStandalone(['--allowed-origin', 'x.example'])).rejects.toThrow(/allowedOrigins/);
    await expect(runStandalone(['--nope'])).rejects.toThrow(/Usage/);
  });
});
