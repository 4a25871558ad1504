/**
 * The long-running commands, run as the real binary: `hopper metrics` (a /metrics server, and
 * one scrape with --once) and `hopper dashboard` (the standalone dashboard, its /metrics behind
 * the token). Each is stopped with SIGTERM and must exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { collect } from '../../hopper/test/helpers/wait.js';
import { hopper } from './run-cli.js';

const env = useHopper();
const BIN = fileURLToPath(new URL('../bin/hopper.js', import.meta.url));

/** Starts `hopper ...args` and resolves with the process once its stdout matches `ready`. */
function start(args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, ...args, '--prefix', env.prefix], {
    env: { ...process.env, REDIS_URL: env.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = ready.exec(out);
      if (match) resolve({ child, match, exited });
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    void exited.then((code) => reject(new Error(`hopper ${args.join(' ')} exited ${code} before it was ready: ${err}`)));
  });
}

describe('hopper metrics and hopper dashboard', () => {
  it('hopper metrics --port serves /metrics on loopback until SIGTERM; --once prints one scrape', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('ok', {});
    const worker = env.worker(name, async () => 1);
    await collect(worker, 'completed', 1);
    await worker.close();
    await queue.add('waits', {});

    const { child, match, exited } = await start(
      ['metrics', '--port', '0'],
      /Serving Hopper metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/,
    );
    const res = await fetch(match[1]);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`hopper_jobs_completed_total{queue="${name}",name="ok"} 1`);
    expect(text).toContain(`hopper_queue_jobs{queue="${name}",state="waiting"} 1`);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const once = await hopper(env.url, env.prefix, 'metrics', name, '--once');
    expect(once.code).toBe(0);
    expect(once.stdout).toContain(`hopper_job_run_seconds_count{queue="${name}",name="ok"} 1`);
    const bad = await hopper(env.url, env.prefix, 'metrics');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--port is required/);
    const unknown = await hopper(env.url, env.prefix, 'metrics', 'no-such-queue', '--once');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No queue named "no-such-queue"/);
  });

  it('hopper dashboard starts the standalone dashboard with a generated token; its /metrics needs it', async () => {
    const name = env.queueName();
    await env.queue(name).add('x', {});
    const { child, match, exited } = await start(
      ['dashboard', '--port', '0'],
      /Hopper dashboard on (http:\/\/127\.0\.0\.1:\d+\/)[\s\S]*Bearer (\S+)\n/,
    );
    const [, url, token] = match;
    expect((await fetch(`${url}metrics`)).status).toBe(401);
    const res = await fetch(`${url}metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`hopper_queue_jobs{queue="${name}",state="waiting"} 1`);
    const queues = await fetch(`${url}api/queues`, { headers: { authorization: `Bearer ${token}` } });
    expect(queues.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
