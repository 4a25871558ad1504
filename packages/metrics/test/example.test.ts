/** examples/metrics.mjs (docs/metrics.md points to it) runs to completion against the test Redis and prints what the docs show. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const EXAMPLE = fileURLToPath(new URL('../../../examples/metrics.mjs', import.meta.url));

describe('examples/metrics.mjs', () => {
  it('prints exact counters, gauges and histograms from a user registry, then serves /metrics', async () => {
    const { stdout } = await run(process.execPath, [EXAMPLE], { env: { ...process.env, REDIS_URL: inject('redisUrl') }, timeout: 25_000 });
    expect(stdout).toContain('app_signups_total 3');
    expect(stdout).toContain('hopper_jobs_completed_total{queue="emails",name="welcome"} 3');
    expect(stdout).toContain('hopper_jobs_retried_total{queue="emails",name="bounce"} 1');
    expect(stdout).toContain('hopper_jobs_failed_total{queue="emails",name="bounce"} 1');
    expect(stdout).toContain('hopper_queue_jobs{queue="emails",state="delayed"} 1');
    expect(stdout).toContain('hopper_job_run_seconds_count{queue="emails",name="welcome"} 3');
    expect(stdout).toMatch(/GET \/metrics: \d+ samples/);
  });
});
