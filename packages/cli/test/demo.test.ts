/**
 * `hopper demo`: the repository's demo through the CLI, bounded with --duration, against the test
 * Redis (REDIS_URL) on its own prefix; and its usage errors.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { hopper } from './run-cli.js';

const BIN = fileURLToPath(new URL('../bin/hopper.js', import.meta.url));

describe('hopper demo', () => {
  it('runs the scenarios for --duration seconds, then stops with every job accounted for', async () => {
    const result = await hopper(inject('redisUrl'), `cli-demo-${process.pid}`, 'demo', '--duration', '2', '--port', '0');
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/backend: Redis at redis:\/\/.* \(REDIS_URL\)/);
    expect(result.stdout).toMatch(/dashboard: http:\/\/127\.0\.0\.1:\d+\//);
    for (const name of ['invoices', 'stock', 'digest', 'newsletter', 'generation']) expect(result.stdout).toContain(`[${name}] started`);
    expect(result.stdout).toMatch(/no job lost: all \d+ jobs the demo added are accounted for/);
  });

  it('stops gracefully on Ctrl-C (SIGINT): workers finish their active jobs, every job accounted for', async () => {
    const child = spawn(process.execPath, [BIN, 'demo', '--duration', '120', '--port', '0', '--prefix', `cli-demo-int-${process.pid}`], {
      env: { ...process.env, REDIS_URL: inject('redisUrl') },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Interrupted once the scenarios are producing (their first summary line), long before --duration.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (/\[invoices\] \d+ uploaded/.test(stdout)) resolve();
      });
      void exited.then(() => reject(new Error(`the demo exited before its first summary:\n${stdout}\n${stderr}`)));
    });
    child.kill('SIGINT');
    const code = await exited;
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/shutdown: producers stopped; closing \d+ workers/);
    expect(stdout).toMatch(/no job lost: all \d+ jobs the demo added are accounted for/);
  });

  it('refuses contradictory or bad options, changing nothing', async () => {
    const both = await hopper(inject('redisUrl'), 'cli-demo-usage', 'demo', '--sqlite', '--redis', 'redis://127.0.0.1:1');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--sqlite and --redis contradict each other');
    const duration = await hopper(inject('redisUrl'), 'cli-demo-usage', 'demo', '--duration', 'soon');
    expect(duration.code).toBe(2);
    expect(duration.stderr).toContain('--duration must be an integer from 0 to 2147483, not "soon"');
  });
});
