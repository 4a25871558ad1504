/**
 * The runnable examples the docs point to (examples/*.mjs) run to completion against the test
 * Redis and print what the docs say they print. They use the built package (npm test builds it).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const examples = fileURLToPath(new URL('../../../../examples/', import.meta.url));

async function example(file: string, env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [`${examples}${file}`], {
      env: { ...process.env, REDIS_URL: inject('redisUrl'), ...env },
      // Under the test's own 30 s, so a hung example fails with what it printed so far.
      timeout: 25_000,
    });
    return stdout;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`${file} failed: ${(err as Error).message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  }
}

describe('examples', () => {
  it('testing.mjs: hopper/testing runs retries and a day-long delay on a fake clock, without Redis', async () => {
    const out = await example('testing.mjs');
    expect(out).toContain('charged after 3 attempts: {"charged":42}');
    expect(out).toContain('reminder ran at 2026-06-02T09:00:05.000Z');
    expect(out).toContain('a day and a few retries in well under 5 s of real time');
  });

  it('telemetry.mjs: a trace from add to processing, meter counts, metrics, Prometheus, a refused option', async () => {
    const out = await example('telemetry.mjs');
    expect(out).toMatch(/span process emails \(consumer\) trace=(t\d+) parent="add emails\.welcome"/);
    expect(out).toContain('processing welcome: active span is "process emails"');
    expect(out).toContain('meter bullmq.jobs.completed +1 (job digest)');
    expect(out).toContain("getMetrics('completed'): 3 jobs counted");
    expect(out).toContain('bullmq_job_completed_total{queue="emails", env="example"} 3');
    expect(out).toContain('refused: runRetryDelay (a Worker option in BullMQ) is not supported by Hopper');
  });

  it('otel.mjs: one OpenTelemetry trace from the add to both attempts and their steps, baggage in the processor', async () => {
    const out = await example('otel.mjs');
    expect(out).toContain('attempt 1 of send-invoice: request.id=req-7f3a');
    expect(out).toContain('attempt 2 of send-invoice: request.id=req-7f3a');
    expect(out).toContain('5 spans in 1 trace:');
    expect(out).toContain(
      '  add invoices.send-invoice\n    process invoices [error]\n      step render\n    process invoices\n      step render [stored]',
    );
  });

  it('generation.mjs: a generation streamed over SSE, a closed tab cancelling its job, and a tenant budget refusing a POST', async () => {
    const out = await example('generation.mjs');
    expect(out).toContain('streamed: Here is a short answer to "What is a job queue?", streamed one token at a time.');
    expect(out).toContain('read 3 tokens, then closed the tab');
    expect(out).toMatch(/job \d+ ended: CancelledError/);
    expect(out).toMatch(/job \d+ state: failed/);
    expect(out).toContain("acme budget: 17 of 50 tokens used (the estimate of 25, corrected by the job's report)");
    expect(out).toContain('POST refused: 429 Budget exceeded for tenant "acme" on queue "generations"');
  });

  it('agent-loop.mjs: a run stopped by its budget, another cancelled mid-turn', async () => {
    const out = await example('agent-loop.mjs');
    expect(out).toContain('research turn 2: 700 tokens, run cost 2100');
    expect(out).toContain('research ended: Run "research" has cost 2100, reaching its maxCost (2000): turn 3 was not added.');
    expect(out).toContain('cancelRun: {"turn":"chat:1","result":"signalled"}');
    expect(out).toContain('chat ended: CancelledError');
    expect(out).toContain('chat turn 2 exists: false');
  });

  it('flows.mjs: a report from its children, an ignored failure, dynamic children', async () => {
    const out = await example('flows.mjs');
    expect(out).toContain('state: waiting-children');
    expect(out).toContain('policy ignoreDependencyOnFailure');
    expect(out).toContain('report result: {"rows":1200,"tables":2,"failed":["legacy table is gone"]}');
    expect(out).toContain('fan-out result: {"rows":800,"tables":3,"failed":[]}');
    expect(out).toMatch(/getFlow: monthly <- .*extract\(legacy\)/);
  });

  it('newsletter.mjs: one split job fans out batches and sums them', async () => {
    const out = await example('newsletter.mjs', { USERS: '100000' });
    expect(out).toMatch(/sent to 100,000 users in 100 batches/);
    expect(out).toMatch(/Redis memory at the peak .* bytes per batch job/);
  });

  it('repeat.mjs: legacy repeatable jobs on job schedulers, listed and removed', async () => {
    const out = await example('repeat.mjs');
    expect(out).toContain('first occurrence: true, key bird:colibri:::500');
    expect(out).toContain('cron key submarine:::Europe/Paris:0 15 3 * * *, ran at once: true');
    expect(out).toContain('bird iterations: 1, 2, 3');
    expect(out).toContain('repeatable bird: id=colibri every=500 pattern=null tz=null');
    expect(out).toContain('repeatable submarine: id=null every=null pattern=0 15 3 * * * tz=Europe/Paris');
    expect(out).toContain('removed by key: true');
    expect(out).toContain('removed by options: true');
    expect(out).toContain('repeatable jobs left: 0');
  });

  it('steps.mjs: an agent loop whose crashed turn does not send its email twice', async () => {
    const out = await example('steps.mjs');
    expect(out).toContain('failed: worker crashed after the email (simulated) (will retry)');
    expect(out).toContain('last turn: {"done":true,"text":"Done: the customer was told."}');
    expect(out).toContain('emails sent: 1 (["your order shipped"])');
  });

  it('failures.mjs: dead letter and replay, cancellation of an active job, a timeout retried', async () => {
    const out = await example('failures.mjs');
    expect(out).toContain('dead letter orders:1:2 (from orders#1): ECONNREFUSED ledger:5432');
    expect(out).toContain('replay: {"replayed":1,"refused":[]}');
    expect(out).toContain('charge after replay: charge done');
    expect(out).toContain('cancelJob: signalled');
    expect(out).toContain('export ended: CancelledError: user closed the tab');
    expect(out).toContain('slow after its retry: slow done');
    expect(out).toContain('export after retryJobs: export done');
    expect(out).toContain('close: CloseTimeoutError, released job(s) 1');
    expect(out).toContain('report is now waiting');
  });

  it('groups.mjs: a small tenant is not stuck behind a big one; caps, pause and limits (weighted too) hold', async () => {
    const out = await example('groups.mjs');
    expect(out).toContain('refused: group tiny holds 1 of 1');
    expect(out).toContain("refused: cost 5000 is above group ai-co's 1000 tokens per 60000 ms");
    expect(out).toContain('ai-co: limited, 1 waiting, 0 active');
    const position = Number(/small-co started at position (\d+)/.exec(out)?.[1]);
    expect(position).toBeLessThanOrEqual(10);
    expect(out).toContain('on-hold: paused, 1 waiting, 0 active');
    expect(out).toMatch(/big-co: (ready|maxed|limited), \d+ waiting/);
    const most = Number(/most deliveries of one customer at once: (\d+)/.exec(out)?.[1]);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4);
  });
});
