/**
 * docs/alerts/hopper-rules.yml, checked against real deployments: each rule's expression is
 * evaluated (test/promql.ts: the subset the rules use) over two scrapes of hopper-queue-metrics, once
 * on a deployment broken the way the rule is about (it must fire) and once on a healthy one (it
 * must not). Every rule in the file must have its two deployments here.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, Queue, Worker, type Processor } from 'hopper-queue';
import { createBackend } from '../../hopper/src/backend/create.js';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { startRedisServer, type RedisServerHandle } from '../../hopper/test/helpers/redis-server.js';
import { collect, once, until } from '../../hopper/test/helpers/wait.js';
import { HopperMetrics } from '../src/index.js';
import { parseText } from './prom-text.js';
import { evaluate, type Element } from './promql.js';

const env = useHopper();
const HOUR = 3_600_000;
const RULES = fileURLToPath(new URL('../../../docs/alerts/hopper-rules.yml', import.meta.url));

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}
const rules: Rule[] = (parse(readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const rule = (name: string): Rule => {
  const found = rules.find((r) => r.alert === name);
  if (!found) throw new Error(`no rule ${name} in ${RULES}`);
  return found;
};

/** A deployment between its two scrapes: `between` makes what happens after the first one. */
interface Deployment {
  metrics: HopperMetrics;
  between(): Promise<void>;
}

/** Scrapes, runs `between`, scrapes again, and evaluates the rule's expression over the two scrapes. */
async function evaluateRule(name: string, deployment: Deployment): Promise<Element[]> {
  try {
    const before = parseText(await deployment.metrics.metrics());
    await deployment.between();
    const after = parseText(await deployment.metrics.metrics());
    return evaluate(rule(name).expr, { before, after, time: Date.now() / 1000 });
  } finally {
    await deployment.metrics.close();
  }
}

const metricsOf = (queue: string): HopperMetrics =>
  new HopperMetrics({ connection: env.url, prefix: env.prefix, queues: [queue], cacheMs: 0 });

/** A queue (and a way to run jobs on it) whose worker processes by job name: `fail` throws, anything else completes. */
function queueWith(name: string, opts: { clock?: FakeClock } = {}) {
  const queue = env.track(new Queue(name, { connection: env.url, prefix: env.prefix, clock: opts.clock }));
  const processor: Processor = async (job) => {
    if (job.name === 'fail') throw new Error('broken');
  };
  const worker = () => env.track(new Worker(name, processor, { connection: env.url, prefix: env.prefix, clock: opts.clock }));
  /** Adds the jobs and waits until a worker finished them all. */
  const run = async (jobs: { name: string; opts?: Record<string, unknown> }[]) => {
    const w = worker();
    const fails = jobs.filter((j) => j.name === 'fail').length;
    const done = Promise.all([
      jobs.length - fails > 0 && collect(w, 'completed', jobs.length - fails),
      fails > 0 && collect(w, 'failed', fails),
    ]);
    await queue.addBulk(jobs.map((j) => ({ name: j.name, data: {}, opts: j.opts })));
    await done;
    await w.close();
  };
  return { queue, worker, run };
}

const many = (n: number, name: string, opts?: Record<string, unknown>) => Array.from({ length: n }, () => ({ name, opts }));

type Scenario = (bad: boolean) => Promise<Deployment>;

const SCENARIOS: Record<string, Scenario> = {
  async HopperBacklogHigh(bad) {
    const name = env.queueName('backlog');
    const { run, queue } = queueWith(name);
    await run(many(5, 'ok'));
    await queue.addBulk(many(bad ? 1_001 : 20, 'ok').map((j) => ({ ...j, data: {} })));
    return { metrics: metricsOf(name), between: async () => undefined };
  },

  async HopperOldestWaitingHigh(bad) {
    const name = env.queueName('oldest');
    const { queue } = queueWith(name);
    await queue.add('ok', {}, { timestamp: Date.now() - (bad ? 10 * 60_000 : 1_000) });
    return { metrics: metricsOf(name), between: async () => undefined };
  },

  async HopperFailureRateHigh(bad) {
    const name = env.queueName('failing');
    const { run } = queueWith(name);
    await run([...many(5, 'ok'), ...many(1, 'fail')]);
    return { metrics: metricsOf(name), between: () => run(bad ? [...many(10, 'ok'), ...many(10, 'fail')] : many(20, 'ok')) };
  },

  async HopperDeadLetterGrowth(bad) {
    const name = env.queueName('dl');
    const dlq = env.queueName('dlq');
    await env.queue(dlq).waitUntilReady();
    const { run } = queueWith(name);
    // Both names have run before the first scrape (a series must exist before its increase counts, as in Prometheus).
    await run([...many(2, 'ok', { deadLetter: { queue: dlq } }), ...many(1, 'fail')]);
    return {
      metrics: metricsOf(name),
      between: () => run(bad ? many(2, 'fail', { deadLetter: { queue: dlq } }) : many(2, 'ok', { deadLetter: { queue: dlq } })),
    };
  },

  async HopperJobsStalled(bad) {
    const name = env.queueName('stalls');
    const { run, queue } = queueWith(name);
    await run(many(2, 'ok'));
    return {
      metrics: metricsOf(name),
      between: async () => {
        if (!bad) return run(many(2, 'ok'));
        // A worker claims a job and dies: its lock (taken 10 s ago, for 1 s) has expired; the stall check rescues it.
        await queue.add('ok', {});
        const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
        await backend.claim({ count: 1, lockMs: 1_000, tokenPrefix: 'ghost:1:' }, Date.now() - 10_000);
        const rescuer = env.worker(name, null, { autorun: false });
        expect((await rescuer.stallRescuer.runOnce(true)).rescued).toHaveLength(1);
      },
    };
  },

  async HopperScheduleMissed(bad) {
    const name = env.queueName('missed');
    const clock = new FakeClock(Math.floor(Date.now() / HOUR) * HOUR);
    const { queue, worker } = queueWith(name, { clock });
    await queue.upsertJobScheduler('hourly', { every: HOUR, catchup: 'none' }, { name: 'ok' });
    const first = worker();
    await once(first, 'completed');
    await until(async () => (await queue.getJobSchedulerState('hourly'))?.next === clock.now() + HOUR, 'the next run to be planned');
    if (bad) await first.close();
    return {
      metrics: metricsOf(name),
      between: async () => {
        // Bad: no worker for three hours. Healthy: the worker runs the next occurrence on time.
        const running = bad ? undefined : once(first, 'completed');
        clock.advance(bad ? 3 * HOUR : HOUR);
        if (running) return void (await running);
        const second = worker();
        await until(async () => ((await queue.getJobSchedulerState('hourly'))?.missed ?? 0) > 0, 'missed runs to be counted');
        await second.close();
      },
    };
  },

  async HopperScheduleLate(bad) {
    const name = env.queueName('late');
    const clock = new FakeClock(Math.floor(Date.now() / HOUR) * HOUR);
    const { queue, worker } = queueWith(name, { clock });
    await queue.upsertJobScheduler('hourly', { every: HOUR }, { name: 'ok' });
    const first = worker();
    await once(first, 'completed');
    await until(async () => (await queue.getJobSchedulerState('hourly'))?.next === clock.now() + HOUR, 'the next run to be planned');
    await first.close(); // writes its latency counts
    return {
      metrics: metricsOf(name),
      between: async () => {
        // Bad: the workers come back three minutes after the run was due (within the catch-up window).
        if (bad) clock.advance(HOUR + 3 * 60_000);
        const second = worker();
        const ran = once(second, 'completed');
        if (!bad) clock.advance(HOUR);
        await ran;
        await second.close();
      },
    };
  },
};

describe('alert rules (docs/alerts/hopper-rules.yml)', () => {
  it('parses, and every rule has a severity, a summary, a description and deployments that test it', () => {
    expect(rules.length).toBeGreaterThanOrEqual(9);
    for (const r of rules) {
      expect(r.alert).toMatch(/^Hopper[A-Za-z]+$/);
      expect(['warning', 'critical']).toContain(r.labels.severity);
      expect(r.annotations.summary).toBeTruthy();
      expect(r.annotations.description).toBeTruthy();
    }
    const tested = [...Object.keys(SCENARIOS), ...REDIS_RULES].sort();
    expect(rules.map((r) => r.alert).sort()).toEqual(tested);
  });

  for (const name of Object.keys(SCENARIOS)) {
    // Each case runs two deployments with real workers, a dozen waits in a row: on a loaded 2-core
    // machine that takes far more than the default 30 s, though each wait is bounded on its own.
    it(`${name} fires on a deployment broken that way, not on a healthy one`, { timeout: 120_000 }, async () => {
      const healthy = await evaluateRule(name, await SCENARIOS[name](false));
      expect(healthy).toEqual([]);
      const bad = await evaluateRule(name, await SCENARIOS[name](true));
      expect(bad.length).toBeGreaterThan(0);
    });
  }
});

const REDIS_RULES = ['HopperRedisMemoryHigh', 'HopperRedisEvictingKeys'];

describe('alert rules on Redis (a server of its own, maxmemory 16 MB, allkeys-lru)', () => {
  let server: RedisServerHandle;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedisServer(['--maxmemory', '16mb', '--maxmemory-policy', 'allkeys-lru']);
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });
  const metrics = () => new HopperMetrics({ connection: server.url, cacheMs: 0 });
  const usedRatio = async () => {
    const info = await client.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)![1]);
    return used / (16 * 1024 * 1024);
  };
  /** Writes 64 KB values until Redis uses `ratio` of maxmemory (bounded). */
  const fill = async (ratio: number, prefix: string) => {
    const value = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 2_000 && (await usedRatio()) < ratio; i++) {
      const pipeline = client.pipeline();
      for (let j = 0; j < 8; j++) pipeline.set(`${prefix}:${i}:${j}`, value);
      await pipeline.exec();
    }
  };

  it('HopperRedisMemoryHigh and HopperRedisEvictingKeys fire on a full, evicting Redis, not on one with room', async () => {
    for (const name of REDIS_RULES) {
      expect(await evaluateRule(name, { metrics: metrics(), between: async () => undefined })).toEqual([]);
    }
    await fill(0.9, 'fill');
    expect(await evaluateRule('HopperRedisMemoryHigh', { metrics: metrics(), between: async () => undefined })).not.toEqual([]);
    const evictions = await evaluateRule('HopperRedisEvictingKeys', { metrics: metrics(), between: () => fill(1.5, 'more') });
    expect(evictions.length).toBe(1);
    expect(evictions[0].value).toBeGreaterThan(0);
  });
});
