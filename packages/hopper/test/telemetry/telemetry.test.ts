import { describe, expect, it } from 'vitest';
import {
  FlowProducer,
  InvalidJobIdError,
  InvalidOptionsError,
  MetricNames,
  SpanKind,
  TelemetryAttributes,
  type Job,
} from '../../src/index.js';
import { fakeTelemetry, type FakeContext, type FakeSpan } from '../helpers/fake-telemetry.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal, until } from '../helpers/wait.js';

const env = useHopper();

describe('telemetry: spans', () => {
  it('traces an add as a producer span and links the processing span to it', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry();
    const queue = env.queue(name, { telemetry });
    const job = await queue.add('resize', { n: 1 });
    const [add] = telemetry.tracer.named(`add ${name}.resize`);
    expect(add.kind).toBe(SpanKind.PRODUCER);
    expect(add.ended).toBe(1);
    expect(add.attributes[TelemetryAttributes.QueueName]).toBe(name);
    expect(add.attributes[TelemetryAttributes.QueueOperation]).toBe('add');
    expect(add.attributes[TelemetryAttributes.JobId]).toBe(job.id);
    // The context travels with the job, in its options (BullMQ's `tm`).
    const stored = await queue.getJob(job.id as string);
    expect(JSON.parse(stored?.opts.telemetry?.metadata ?? '{}')).toEqual({ traceId: add.traceId, spanId: add.spanId });

    const inside = signal<FakeContext>();
    env.worker(name, async () => inside.resolve(telemetry.contextManager.active()), { telemetry, name: 'w1' });
    const active = await inside.promise;
    const [process] = telemetry.tracer.named(`process ${name}`);
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.traceId).toBe(add.traceId);
    expect(process.parentId).toBe(add.spanId);
    // The processor runs with the processing span active: its own spans nest under it.
    expect(active.span).toBe(process);
    await until(async () => process.ended === 1, 'the process span ended');
    expect(process.attributes[TelemetryAttributes.JobId]).toBe(job.id);
    expect(process.attributes[TelemetryAttributes.WorkerName]).toBe('w1');
    expect(process.attributes[TelemetryAttributes.JobAttemptsMade]).toBe(1);
    expect(process.events.map((e) => e.name)).toEqual(['job completed']);
    expect(telemetry.contextManager.fromMetadataCalls).toBe(1);
  });

  it('traces addBulk with the names and count, each job carrying the context', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry();
    const queue = env.queue(name, { telemetry });
    const jobs = await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'b', data: {}, opts: { telemetry: { omitContext: true } } },
    ]);
    const [span] = telemetry.tracer.named(`addBulk ${name}`);
    expect(span.kind).toBe(SpanKind.PRODUCER);
    expect(span.attributes[TelemetryAttributes.BulkNames]).toEqual(['a', 'b']);
    expect(span.attributes[TelemetryAttributes.BulkCount]).toBe(2);
    const [a, b] = await Promise.all(jobs.map((job) => queue.getJob(job.id as string)));
    expect(a?.opts.telemetry?.metadata).toContain(span.spanId);
    expect(b?.opts.telemetry).toEqual({ omitContext: true });
  });

  it('starts a new trace for a job added with omitContext', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry();
    const queue = env.queue(name, { telemetry });
    await queue.add('x', {}, { telemetry: { omitContext: true } });
    const worker = env.worker(name, async () => 'ok', { telemetry });
    await once(worker, 'completed');
    const [process] = telemetry.tracer.named(`process ${name}`);
    expect(process.parentId).toBeUndefined();
    expect(telemetry.contextManager.fromMetadataCalls).toBe(0);
  });

  it('records a failed attempt on the processing span, and a refused add on the add span', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry();
    const queue = env.queue(name, { telemetry });
    await expect(queue.add('x', {}, { jobId: '42' })).rejects.toBeInstanceOf(InvalidJobIdError);
    const [refused] = telemetry.tracer.named(`add ${name}.x`);
    expect(refused.exceptions).toHaveLength(1);
    expect(refused.ended).toBe(1);

    await queue.add('boom', {});
    const worker = env.worker(
      name,
      async () => {
        throw new Error('disk full');
      },
      { telemetry },
    );
    await once(worker, 'failed');
    const [process] = telemetry.tracer.named(`process ${name}`);
    await until(async () => process.ended === 1, 'the process span ended');
    expect(process.events).toEqual([{ name: 'job failed', attributes: { [TelemetryAttributes.JobFailedReason]: 'disk full' } }]);
    expect((process.exceptions[0] as Error).message).toBe('disk full');
  });

  it('traces clean with the count of removed jobs', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry();
    const queue = env.queue(name, { telemetry });
    await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'b', data: {} },
    ]);
    expect(await queue.clean(0, 0, 'wait')).toHaveLength(2);
    const [span] = telemetry.tracer.named(`clean ${name}`);
    expect(span.attributes[TelemetryAttributes.QueueCleanCount]).toBe(2);
  });

  it('traces a job scheduler upsert as an add of its first occurrence', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry();
    const queue = env.queue(name, { telemetry });
    const job = await queue.upsertJobScheduler('nightly', { every: 60_000 }, { name: 'report', data: {} });
    const [span] = telemetry.tracer.named(`add ${name}.report`);
    expect(span.attributes[TelemetryAttributes.JobSchedulerId]).toBe('nightly');
    expect(span.attributes[TelemetryAttributes.JobId]).toBe(job?.id);
  });

  it('traces flows: every job of the flow carries the context of the addFlow span', async () => {
    const parentQueue = env.queueName('parent');
    const childQueue = env.queueName('child');
    const telemetry = fakeTelemetry();
    const flows = env.track(new FlowProducer({ connection: env.url, prefix: env.prefix, telemetry }));
    const tree = await flows.add({
      name: 'report',
      queueName: parentQueue,
      data: {},
      children: [{ name: 'part', queueName: childQueue, data: {} }],
    });
    const [span] = telemetry.tracer.named(`addFlow ${parentQueue}`);
    expect(span.kind).toBe(SpanKind.PRODUCER);
    expect(span.attributes[TelemetryAttributes.FlowName]).toBe('report');
    const child = tree.children?.[0].job as Job;
    const storedChild = await env.queue(childQueue).getJob(child.id as string);
    expect(storedChild?.opts.telemetry?.metadata).toContain(span.spanId);

    await flows.addBulk([
      { name: 'f1', queueName: parentQueue, data: {} },
      { name: 'f2', queueName: parentQueue, data: {} },
    ]);
    const [bulk] = telemetry.tracer.named('addBulkFlows');
    expect(bulk.attributes[TelemetryAttributes.BulkNames]).toBe('f1,f2');
    expect(bulk.attributes[TelemetryAttributes.BulkCount]).toBe(2);
  });

  it('stores nothing for telemetry without the option', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {});
    expect((await queue.getJob(job.id as string))?.opts.telemetry).toBeUndefined();
  });

  it('refuses a telemetry option that lacks the interface', () => {
    const name = env.queueName();
    expect(() => env.queue(name, { telemetry: { tracer: {} } as never })).toThrow(InvalidOptionsError);
    expect(() => env.worker(name, null, { telemetry: { contextManager: {} } as never })).toThrow(/telemetry must be/);
  });
});

describe('telemetry: metrics on the meter', () => {
  function values(meter: NonNullable<ReturnType<typeof fakeTelemetry>['meter']>, metric: MetricNames) {
    return meter.of(metric).map((m) => [m.value, m.attributes?.[TelemetryAttributes.JobState]]);
  }

  it('counts completed, failed, delayed and retried jobs, and records durations', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry(true);
    const meter = telemetry.meter!;
    const queue = env.queue(name);
    await queue.add('ok', {});
    await queue.add('fail', {}, { attempts: 3, backoff: 0 });
    await queue.add('late', {}, { attempts: 2, backoff: { type: 'fixed', delay: 60_000 } });
    const worker = env.worker(
      name,
      async (job) => {
        if (job.name !== 'ok') throw new Error('no');
        return 1;
      },
      { telemetry },
    );
    // ok completes; fail: retried, retried, failed; late: delayed.
    await until(
      async () => meter.of(MetricNames.JobsFailed).length === 1 && meter.of(MetricNames.JobsDelayed).length === 1,
      'all attempts metered',
    );
    expect(values(meter, MetricNames.JobsCompleted)).toEqual([[1, 'completed']]);
    expect(values(meter, MetricNames.JobsRetried)).toEqual([
      [1, 'retried'],
      [1, 'retried'],
    ]);
    expect(values(meter, MetricNames.JobsFailed)).toEqual([[1, 'failed']]);
    expect(values(meter, MetricNames.JobsDelayed)).toEqual([[1, 'delayed']]);
    const durations = meter.of(MetricNames.JobDuration);
    expect(durations).toHaveLength(2);
    for (const d of durations) {
      expect(d.value).toBeGreaterThanOrEqual(0);
      expect(d.attributes?.[TelemetryAttributes.QueueName]).toBe(name);
    }
    await worker.close();
  });

  it('records job counts per state on a gauge with recordJobCountsMetric', async () => {
    const name = env.queueName();
    const telemetry = fakeTelemetry(true);
    const queue = env.queue(name, { telemetry });
    await queue.addBulk([
      { name: 'a', data: {} },
      { name: 'b', data: {}, opts: { delay: 60_000 } },
    ]);
    expect(await queue.recordJobCountsMetric('waiting', 'delayed')).toEqual({ waiting: 1, delayed: 1 });
    expect(
      telemetry.meter!.of(MetricNames.QueueJobsCount).map((m) => [m.attributes?.[TelemetryAttributes.QueueJobsState], m.value]),
    ).toEqual([
      ['waiting', 1],
      ['delayed', 1],
    ]);
  });
});

// Keeps the span type in use for readers of this file: every span Hopper starts is ended once.
export type { FakeSpan };
