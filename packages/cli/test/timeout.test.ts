/**
 * `hopper` against a server that does not answer (issue 34): a silent server hung `hopper queues`,
 * a refused port printed 21 ioredis stack traces over 14 s. Now one line on stderr, exit code 1,
 * within --timeout (default 10 s).
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../hopper/test/helpers/redis-server.js';
import { hopper } from './run-cli.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await promise;
  return { value, ms: performance.now() - started };
}

describe('hopper --timeout', () => {
  it('a server that accepts and never answers: one line, exit 1, within --timeout', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { value: result, ms } = await timed(hopper(url, 'hopper', 'queues', '--redis', url, '--timeout', '1'));
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^hopper queues: no answer from .* within 1 s \(--timeout\)/)]);
    // 1 s, plus starting Node (over a second on a loaded machine).
    expect(ms).toBeLessThan(5_000);
  });

  it('a refused port: one line, no stack trace, exit 1, within --timeout', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const { value: result, ms } = await timed(hopper(url, 'hopper', 'queues', '--redis', url, '--timeout', '2'));
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^hopper queues: /);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    // 2 s, plus starting Node.
    expect(ms).toBeLessThan(6_000);
  });

  it('refuses a --timeout that is not a positive number of seconds (exit 2)', async () => {
    const result = await hopper('redis://127.0.0.1:1', 'hopper', 'queues', '--timeout', 'soon');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--timeout takes a number of seconds/);
  });
});
