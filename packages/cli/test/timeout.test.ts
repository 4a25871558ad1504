/**
 * `hopper` against a server that does not answer (issue 34): a silent server hung `hopper queues`,
 * a refused port printed 21 ioredis stack traces over 14 s. Now one line on stderr, exit code 1,
 * within --timeout (default 10 s).
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { freePort } from '../../hopper/test/helpers/redis-server.js';
import { main } from '../src/main.js';
import { hopper } from './run-cli.js';

/** Runs `main` in this process (its time is the command's, without starting Node); returns its code, stderr and duration. */
async function inProcess(...argv: string[]): Promise<{ code: number; stderr: string; ms: number }> {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (d: Buffer) => (text += d.toString()));
  const started = performance.now();
  const code = await main(argv, { stdout: new PassThrough(), stderr, stdin: new PassThrough() }, {});
  return { code, stderr: text, ms: performance.now() - started };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

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
    const run = await inProcess('queues', '--redis', url, '--timeout', '1');
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(2_500);
    // The binary, as an operator runs it: one line, exit 1 (it hung before).
    const result = await hopper(url, 'hopper', 'queues', '--redis', url, '--timeout', '1');
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^hopper queues: no answer from .* within 1 s \(--timeout\)/)]);
  }, 30_000);

  it('a refused port: one line, no stack trace, exit 1, within --timeout', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const run = await inProcess('queues', '--redis', url, '--timeout', '2');
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(3_500);
    const result = await hopper(url, 'hopper', 'queues', '--redis', url, '--timeout', '2');
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^hopper queues: /);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  }, 30_000);

  it('refuses a --timeout that is not a positive number of seconds (exit 2)', async () => {
    const result = await hopper('redis://127.0.0.1:1', 'hopper', 'queues', '--timeout', 'soon');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--timeout takes a number of seconds/);
  });
});
