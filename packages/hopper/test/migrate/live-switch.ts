/**
 * The live switch of a BullMQ deployment to Hopper, and back, with the real `bullmq` package:
 * a deployment built by BullMQ (waiting, delayed for days and for seconds, prioritized, failed,
 * flows with a completed and a waiting child, three job schedulers, deduplicated jobs), BullMQ
 * workers running and BullMQ producers adding; then the bridge (`hopper migrate --follow`, a
 * child process) and Hopper workers start, one producer moves to Hopper, the BullMQ workers are
 * closed mid-run, the bridge is SIGKILLed twice and restarted. Then the failed jobs are retried in
 * Hopper and everything runs; finally the way back (`migrateToBullMQ`) returns what is left (the
 * jobs delayed for days, the schedulers) to BullMQ, whose workers run it.
 *
 * Parameterised by size: small in `npm test` (test/migrate/live-switch.test.ts), full in
 * `npm run test:scale` (test/scale/migrate-live.test.ts), on BullMQ prefix `bp` (the caller deletes
 * its keys). Returns the figures.
 */
import { Redis } from 'ioredis';
import { FlowProducer as BullFlowProducer, Queue as BullQueue, Worker as BullWorker, type Job as BullJob } from 'bullmq';
import type { HopperEnv } from '../helpers/hopper.js';
import type { Worker } from '../../src/index.js';
import { migrateToBullMQ, type MigrationReport } from '../../src/migrate/index.js';
import { bullKeys } from '../../src/migrate/bullmq-keys.js';
import { checkOccurrences, Ledger, type Side, type Verdict } from './live-ledger.js';
import { Migrator } from './live-migrator.js';

/** How big the deployment and the live traffic are. */
export interface LiveSize {
  waiting: number;
  /** Delayed for days: they must stay delayed, due at the same instant. */
  delayedLong: number;
  /** Delayed by seconds, due 2 to 10 s after the bridge starts. */
  delayedShort: number;
  prioritized: number;
  failed: number;
  flows: number;
  /** Deduplication ids added twice before the switch. */
  dedup: number;
  /** BullMQ producers (the last one moves to Hopper once the bridge runs). */
  producers: number;
  /** Each producer adds one job every this many ms. */
  addEveryMs: number;
  /** How long the producers keep adding after the bridge starts. */
  liveMs: number;
  /** The bridge's batch size. */
  batchSize: number;
  /** Batches the first run moves before it is killed. */
  killAfterBatches: number;
  bullConcurrency: number;
  hopperConcurrency: number;
}

export const SMALL: LiveSize = {
  waiting: 500,
  delayedLong: 50,
  delayedShort: 50,
  prioritized: 20,
  failed: 10,
  flows: 5,
  dedup: 5,
  producers: 2,
  addEveryMs: 25,
  liveMs: 8000,
  batchSize: 50,
  killAfterBatches: 3,
  bullConcurrency: 1,
  hopperConcurrency: 10,
};

export const FULL: LiveSize = {
  waiting: 10_000,
  delayedLong: 2000,
  delayedShort: 200,
  prioritized: 500,
  failed: 200,
  flows: 50,
  dedup: 50,
  producers: 4,
  addEveryMs: 10,
  liveMs: 30_000,
  batchSize: 200,
  killAfterBatches: 20,
  bullConcurrency: 2,
  hopperConcurrency: 50,
};

/** The schedulers: two that run every second or two across the switch, one daily that only moves. */
const SCHEDULERS = [
  { id: 'tick-every', repeat: { every: 1000 }, period: 1000 },
  { id: 'tick-cron', repeat: { pattern: '* * * * * *', tz: 'Asia/Kolkata' }, period: 1000 },
  { id: 'tick-daily', repeat: { pattern: '30 2 * * *', tz: 'Europe/Paris' }, period: 86_400_000 },
] as const;
/** Kinds of live adds, by the add's number. */
const LIVE_DEDUP_KEYS = 5;
/** The lock ttl of the bridge's runs: a killed run's lock expires this soon. */
const LOCK_TTL_MS = 3000;
/** The last run ends by itself after this long with nothing to move. */
const QUIET_MS = 3000;

/** What the live switch measured. */
export interface LiveFigures {
  size: LiveSize;
  verdict: Verdict;
  /** Jobs moved per state, summed over the bridge's runs (from their progress reports). */
  moved: Record<string, number>;
  /** The last run's report. */
  lastReport: MigrationReport;
  kills: number;
  refusedWhileLocked: number;
  /** From the bridge's start to the last job run in Hopper. */
  switchMs: number;
  /** Scheduler occurrences across the switch, per scheduler. */
  occurrences: Record<string, ReturnType<typeof checkOccurrences>>;
  /** Hopper's counters of the migrated schedulers (missed, skipped by overlap). */
  schedulerCounters: Record<string, { fired: number; missed: number; skippedByOverlap: number }>;
  /** Deduplication ids added before the switch that no longer deduplicate in Hopper. */
  dedupLost: string[];
  /**
   * Live deduplication ids whose adds, on either side, returned more than one job id (their keys
   * have a 10-minute ttl: in BullMQ alone every add returns the first job's id). Reported, not
   * asserted: an id first added on one side is known to the other only once the bridge has moved
   * or copied it (and never to BullMQ when first added in Hopper), so adds on both sides around
   * its first add can make two jobs (docs/migrating.md, Limits).
   */
  dedupSplit: string[];
  /** Parents whose children's values were not their children's return values. */
  flowsWrong: string[];
  /** Long-delayed jobs not in Hopper's delayed set at their due time after the switch. */
  delayedMisplaced: string[];
  back: BackFigures;
}

/** The way back, after the switch. */
export interface BackFigures {
  report: MigrationReport;
  /** Long-delayed jobs not in BullMQ's delayed set at their due time. */
  delayedMisplaced: string[];
  /** Schedulers in BullMQ after the way back, with their next run. */
  schedulers: string[];
  /** Long-delayed jobs run by BullMQ workers after the way back: once each. */
  ranOnce: number;
  doubled: string[];
  lost: string[];
  /** Occurrences that ran twice over both switches. */
  occurrencesTwice: number;
  ms: number;
}

function connectionOf(url: string): Record<string, unknown> {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    maxRetriesPerRequest: null,
  };
}

/** `promise`, or an error saying what was still missing after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: () => Promise<string> | string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    t = setTimeout(() => {
      Promise.resolve(what()).then(
        (text) => reject(new Error(`live switch: still waiting after ${ms} ms: ${text}`)),
        (err: unknown) => reject(err as Error),
      );
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(t);
  }
}

function timer(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs the live switch and the way back; returns the figures (the caller asserts). */
export async function runLiveSwitch(
  env: HopperEnv,
  size: LiveSize,
  bp: string,
  log: (line: string) => void = () => undefined,
): Promise<LiveFigures> {
  const name = env.queueName('live');
  const connection = connectionOf(env.url);
  const conn = new Redis(env.url, { maxRetriesPerRequest: null });
  const ledger = new Ledger();
  const closers: (() => Promise<unknown>)[] = [];
  const bullErrors: unknown[] = [];
  const bq = new BullQueue(name, { connection, prefix: bp });
  const bfp = new BullFlowProducer({ connection, prefix: bp });
  closers.push(
    () => bq.close(),
    () => bfp.close(),
  );
  try {
    // BullMQ workers run the schedulers first (slowly, so most of the deployment is still there
    // at the switch): each fast scheduler runs twice in BullMQ; then they pause while the
    // deployment is built (the manual worker below takes its jobs one by one).
    const bullWorkers: BullWorker[] = [];
    const startBullWorkers = (count: number) => {
      for (let i = 0; i < count; i++) {
        const w = new BullWorker(
          name,
          async (job: BullJob) => {
            if (!job.name.startsWith('tick-')) await timer(50);
            return ledger.process(job, 'bullmq');
          },
          { connection, prefix: bp, concurrency: size.bullConcurrency },
        );
        w.on('error', (err) => bullErrors.push(err));
        bullWorkers.push(w);
      }
    };
    for (const s of SCHEDULERS) await bq.upsertJobScheduler(s.id, s.repeat, { name: s.id, data: { s: s.id } });
    const dailyNext = (await bq.getJobScheduler('tick-daily'))?.next;
    startBullWorkers(2);
    await within(
      ledger.until(() => ledger.occurrencesOf('tick-every') >= 2 && ledger.occurrencesOf('tick-cron') >= 2),
      30_000,
      () => `BullMQ's occurrences: ${JSON.stringify([...ledger.occurrences])}`,
    );
    await Promise.all(bullWorkers.map((w) => w.pause()));

    // The deployment, built by BullMQ. Failures and the flows' completed children first: a
    // worker takes from the head of the line, so these go through it alone.
    const manual = new BullWorker(name, null, { connection, prefix: bp, autorun: false });
    const failed: string[] = [];
    for (let i = 0; i < size.failed; i++) failed.push(ledger.add((await bq.add('fails-in-bullmq', { i })).id, 'bullmq'));
    for (let i = 0; i < size.failed; i++) {
      const job = await manual.getNextJob(`f${i}`);
      await job.moveToFailed(new Error(`boom ${job.id}`), `f${i}`, false);
    }
    const parents: string[] = [];
    for (let i = 0; i < size.flows; i++) {
      const node = await bfp.add({
        name: 'parent',
        queueName: name,
        data: { i },
        children: [
          // lifo: this child is next in line, and completes below; the other one waits.
          { name: 'child', queueName: name, data: { i, c: 'a' }, opts: { lifo: true } },
          { name: 'child', queueName: name, data: { i, c: 'b' } },
        ],
      });
      const pid = ledger.add(node.job.id, 'bullmq');
      parents.push(pid);
      ledger.children.set(
        pid,
        (node.children ?? []).map((c) => ledger.add(c.job.id, 'bullmq')),
      );
      // One child completes in BullMQ: the parent waits for the other one.
      const child = await manual.getNextJob(`c${i}`);
      if ((child.data as { c?: string }).c !== 'a' || child.parentKey === undefined || !child.parentKey.endsWith(`:${pid}`)) {
        throw new Error(`the deployment's flow ${pid}: the next job is ${child.id}, not its first child`);
      }
      await child.moveToCompleted({ v: child.id }, `c${i}`, false);
      ledger.ranByHand(child.id!);
    }
    await manual.close();
    for (let from = 0; from < size.waiting; from += 1000) {
      const n = Math.min(1000, size.waiting - from);
      const jobs = await bq.addBulk(Array.from({ length: n }, (_, j) => ({ name: 'plain', data: { i: from + j } })));
      for (const j of jobs) ledger.add(j.id, 'bullmq');
    }
    for (let from = 0; from < size.delayedLong; from += 1000) {
      const n = Math.min(1000, size.delayedLong - from);
      const jobs = await bq.addBulk(
        Array.from({ length: n }, (_, j) => ({ name: 'later', data: { i: from + j }, opts: { delay: 86_400_000 + (from + j) * 120_000 } })),
      );
      for (const j of jobs) {
        ledger.add(j.id, 'bullmq');
        ledger.longDelayed.set(j.id!, j.timestamp + j.opts.delay!);
      }
    }
    const prio = await bq.addBulk(
      Array.from({ length: size.prioritized }, (_, i) => ({ name: 'urgent', data: { i }, opts: { priority: 1 + (i % 5) } })),
    );
    for (const j of prio) ledger.add(j.id, 'bullmq');
    for (let i = 0; i < size.dedup; i++) {
      for (let twice = 0; twice < 2; twice++) {
        const j = await bq.add('dedup', { i, twice }, { deduplication: { id: `dk${i}`, ttl: 600_000 }, priority: 3 });
        ledger.addDedup(`dk${i}`, j.id, 'bullmq');
      }
    }

    // The schedulers' occurrences now wait behind the backlog in BullMQ (it plans the next one
    // when one starts): the bridge moves the one due. The BullMQ workers go on with the backlog.
    await Promise.all(bullWorkers.map((w) => w.resume()));
    // BullMQ producers start adding: plain, short-delayed, prioritized, deduplicated jobs, flows.
    let producing = true;
    let addNumber = 0;
    const producerSide: Side[] = Array.from({ length: size.producers }, () => 'bullmq');
    const hq = env.queue(name);
    const hfp = env.flows();
    const producer = async (p: number) => {
      const bq2 = new BullQueue(name, { connection, prefix: bp });
      const bfp2 = new BullFlowProducer({ connection, prefix: bp });
      try {
        while (producing) {
          const n = addNumber++;
          const side = producerSide[p];
          await addOne(n, side, side === 'bullmq' ? { queue: bq2, flows: bfp2 } : { queue: hq, flows: hfp });
          await timer(size.addEveryMs);
        }
      } finally {
        await bq2.close();
        await bfp2.close();
      }
    };
    const addOne = async (n: number, side: Side, to: { queue: Adder; flows: FlowAdder }) => {
      const kind = n % 10;
      if (kind === 0) {
        const delay = 1000 + ((n * 37) % 2000);
        const before = Date.now();
        const j = await to.queue.add('soon', { n }, { delay });
        ledger.add(j.id, side);
        ledger.due.set(j.id!, (j.timestamp ?? before) + delay);
      } else if (kind === 1) {
        ledger.add((await to.queue.add('urgent', { n }, { priority: 1 + (n % 3) })).id, side);
      } else if (kind === 2) {
        const key = `live${Math.floor(n / 10) % LIVE_DEDUP_KEYS}`;
        ledger.addDedup(key, (await to.queue.add('dedup', { n }, { deduplication: { id: key, ttl: 600_000 } })).id, side);
      } else if (n % 50 === 3) {
        const node = await to.flows.add({
          name: 'parent',
          queueName: name,
          data: { n },
          children: [
            { name: 'child', queueName: name, data: { n, c: 'a' } },
            { name: 'child', queueName: name, data: { n, c: 'b' } },
          ],
        });
        const pid = ledger.add(node.job.id, side);
        ledger.children.set(
          pid,
          (node.children ?? []).map((c) => ledger.add(c.job.id, side)),
        );
        parents.push(pid);
      } else {
        ledger.add((await to.queue.add('live', { n })).id, side);
      }
    };
    const producers = Array.from({ length: size.producers }, (_, p) => producer(p));

    // Jobs delayed by seconds, due 2 to 10 s after the bridge starts.
    const shortBase = Date.now();
    const shorts = await bq.addBulk(
      Array.from({ length: size.delayedShort }, (_, i) => ({
        name: 'soon',
        data: { i },
        opts: { delay: 2000 + Math.floor((i * 8000) / Math.max(1, size.delayedShort)) },
      })),
    );
    for (const j of shorts) {
      ledger.add(j.id, 'bullmq');
      ledger.due.set(j.id!, (j.timestamp ?? shortBase) + j.opts.delay!);
    }

    // The switch: Hopper workers, then the bridge.
    const hopperWorkers: Worker[] = [];
    for (let i = 0; i < 2; i++) {
      hopperWorkers.push(env.worker(name, async (job) => ledger.process(job as never, 'hopper'), { concurrency: size.hopperConcurrency }));
    }
    const lockKey = bullKeys(bp, name).migrateLock;
    const migrator = new Migrator(
      [env.url, bp, env.prefix, name, String(size.batchSize), 'follow', String(QUIET_MS), String(LOCK_TTL_MS)],
      conn,
      lockKey,
    );
    const switchStarted = Date.now();
    log(`switch: bridge starting; ${ledger.added.size} jobs added so far, ${ledger.runs.size} run in BullMQ`);
    const first = await migrator.start();
    await first.when((p) => p.batches >= size.killAfterBatches);
    await first.kill();
    log(`switch: first run killed after ${first.batches} batches (${JSON.stringify(first.moved)})`);
    // One producer moves to Hopper (the import change), while the bridge is down.
    producerSide[size.producers - 1] = 'hopper';
    const second = await migrator.start();
    await second.when((p) => p.passes >= 1);
    // The BullMQ workers are closed mid-run (each finishes what it holds), the bridge running.
    await Promise.all(bullWorkers.map((w) => w.close()));
    const batchesAtClose = second.batches;
    await second.when((p) => p.batches >= batchesAtClose + 5);
    await second.kill();
    log(`switch: second run killed after ${second.batches} batches, ${second.passes} passes`);
    let last = await migrator.start();
    const liveLeft = size.liveMs - (Date.now() - switchStarted);
    if (liveLeft > 0) await timer(liveLeft);
    producing = false;
    await Promise.all(producers);
    log(`switch: producers stopped after ${Date.now() - switchStarted} ms; ${ledger.added.size} jobs added`);

    // The failed jobs retry in Hopper once the bridge has moved them.
    log('switch: waiting for the failed jobs in Hopper');
    const movedFailed = async () => {
      for (;;) {
        const states = await Promise.all(failed.map((id) => hq.getJobState(id)));
        if (states.every((s) => s === 'failed')) return;
        await timer(100);
      }
    };
    await within(
      movedFailed(),
      60_000,
      async () => `failed jobs in Hopper: ${(await Promise.all(failed.map((id) => hq.getJobState(id)))).join()}`,
    );
    for (const id of failed) await (await hq.getJob(id))!.retry();
    const notRun = async () => {
      const ids = ledger.expected().filter((id) => !ledger.runs.has(id));
      const states = await Promise.all(ids.slice(0, 20).map(async (id) => `${id}:${await hq.getJobState(id)}/${await bq.getJobState(id)}`));
      return `${ids.length} jobs not run (Hopper/BullMQ states: ${states.join(' ')})`;
    };
    await within(
      ledger.until(() => ledger.allRan()),
      60_000 + size.waiting * 10,
      notRun,
    );
    const switchMs = Date.now() - switchStarted;
    // The bridge ends by itself once nothing more comes (a run that lost its lock is restarted).
    log(`switch: every job ran; waiting for the bridge to end`);
    for (;;) {
      await within(last.exited, QUIET_MS + 30_000, () => `the bridge's last run did not end (${last.passes} passes)`);
      if (last.report) break;
      last = await migrator.start();
    }
    const lastReport = last.report;
    log(`switch: every job ran after ${switchMs} ms; the bridge ended (${lastReport.ended})`);

    // Each fast scheduler runs a few more times in Hopper.
    const afterSwitch = { every: ledger.occurrencesOf('tick-every'), cron: ledger.occurrencesOf('tick-cron') };
    await within(
      ledger.until(
        () => ledger.occurrencesOf('tick-every') >= afterSwitch.every + 2 && ledger.occurrencesOf('tick-cron') >= afterSwitch.cron + 2,
      ),
      30_000,
      async () => `occurrences after the switch: ${JSON.stringify(afterSwitch)} then ${JSON.stringify(await hq.getJobSchedulers())}`,
    );
    const schedulerCounters: LiveFigures['schedulerCounters'] = {};
    for (const s of SCHEDULERS) {
      const st = await hq.getJobSchedulerState(s.id);
      schedulerCounters[s.id] = { fired: st?.fired ?? -1, missed: st?.missed ?? -1, skippedByOverlap: st?.skippedByOverlap ?? -1 };
    }
    const verdict = ledger.verdict();
    const occurrences: LiveFigures['occurrences'] = {};
    for (const s of SCHEDULERS.slice(0, 2))
      occurrences[s.id] = checkOccurrences(ledger.occurrences.get(s.id) ?? [], s.period, switchStarted);
    if (process.env.LIVE_DEBUG) {
      log(`DEBUG occurrences ${JSON.stringify([...ledger.occurrences])}`);
      log(`DEBUG dedup ${JSON.stringify([...ledger.dedup].map(([k, v]) => [k, [...v]]))}`);
      for (const pid of parents)
        log(
          `DEBUG flow ${pid} children ${ledger.children.get(pid)?.join()} saw ${JSON.stringify(ledger.childValues.get(pid))} side ${ledger.added.get(pid)} ran ${JSON.stringify(ledger.runs.get(pid))}`,
        );
    }
    // The deduplication ids added before the switch hold in Hopper: an add with one is deduplicated.
    const dedupLost: string[] = [];
    for (let i = 0; i < size.dedup; i++) {
      const before = [...ledger.dedup.get(`dk${i}`)!][0];
      const again = await hq.add('dedup', { again: i }, { deduplication: { id: `dk${i}`, ttl: 600_000 } });
      if (again.id !== before) dedupLost.push(`dk${i}: ${before} then ${again.id}`);
    }
    const dedupSplit = [...ledger.dedup]
      .filter(([key, ids]) => key.startsWith('live') && ids.size !== 1)
      .map(([key, ids]) => `${key}: ${[...ids].map((id) => `${id} (${ledger.added.get(id)})`).join(', ')}`);
    const flowsWrong = parents.filter((pid) => {
      const seen = Object.values(ledger.childValues.get(pid) ?? {}) as { v: string }[];
      const expected = ledger.children.get(pid)!;
      return (
        seen
          .map((x) => x.v)
          .sort()
          .join() !== [...expected].sort().join()
      );
    });
    const delayedMisplaced: string[] = [];
    for (const [id, due] of ledger.longDelayed) {
      const job = await hq.getJob(id);
      if (!job || (await job.getState()) !== 'delayed' || job.timestamp + job.delay !== due) delayedMisplaced.push(id);
    }
    const scheduled = await hq.getJobScheduler('tick-daily');
    if (scheduled?.next !== dailyNext) delayedMisplaced.push(`scheduler tick-daily next ${scheduled?.next} (was ${dailyNext})`);

    // The way back: Hopper workers stop, what is left returns to BullMQ, BullMQ workers run it.
    await Promise.all(hopperWorkers.map((w) => w.close()));
    const backStarted = Date.now();
    const report = await migrateToBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
    const back = await wayBack(bq, ledger, report, startBullWorkers, bullWorkers);
    back.ms = Date.now() - backStarted;
    await Promise.all(bullWorkers.map((w) => w.close()));
    if (bullErrors.length > 0) throw new Error(`BullMQ worker errors: ${bullErrors.map(String).join('; ')}`);
    return {
      size,
      verdict,
      moved: migrator.moved(),
      lastReport,
      kills: 2,
      refusedWhileLocked: migrator.refusedWhileLocked,
      switchMs,
      occurrences,
      schedulerCounters,
      dedupLost,
      dedupSplit,
      flowsWrong,
      delayedMisplaced,
      back: { ...back, occurrencesTwice: countTwice(ledger) },
    };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    conn.disconnect();
  }
}

interface Adder {
  add(name: string, data: unknown, opts?: Record<string, unknown>): Promise<{ id?: string; timestamp?: number }>;
}
interface FlowSpec {
  name: string;
  queueName: string;
  data: unknown;
  children: { name: string; queueName: string; data: unknown }[];
}
interface FlowAdder {
  add(flow: FlowSpec): Promise<{ job: { id?: string }; children?: { job: { id?: string } }[] }>;
}

/** Checks BullMQ after the way back, then runs the long-delayed jobs there (promoted) once each. */
async function wayBack(
  bq: BullQueue,
  ledger: Ledger,
  report: MigrationReport,
  startBullWorkers: (count: number) => void,
  bullWorkers: BullWorker[],
): Promise<Omit<BackFigures, 'occurrencesTwice'>> {
  const delayedMisplaced: string[] = [];
  const inBull = new Map<string, number>();
  for (const j of await bq.getDelayed(0, -1)) inBull.set(j.id!, j.timestamp + j.delay);
  for (const [id, due] of ledger.longDelayed) if (inBull.get(id) !== due) delayedMisplaced.push(id);
  const schedulers = (await bq.getJobSchedulers(0, -1)).map((s) => `${s.key} next ${s.next}`);
  const ranBefore = new Set(ledger.runs.keys());
  const occurrencesBefore = ledger.occurrencesOf('tick-every');
  bullWorkers.splice(0);
  startBullWorkers(2);
  await bq.promoteJobs();
  const long = [...ledger.longDelayed.keys()];
  await within(
    ledger.until(() => long.every((id) => ledger.runs.has(id)) && ledger.occurrencesOf('tick-every') >= occurrencesBefore + 2),
    60_000,
    () =>
      `after the way back: ${long.filter((id) => !ledger.runs.has(id)).length} not run, tick-every ${ledger.occurrencesOf('tick-every')} (was ${occurrencesBefore})`,
  );
  for (const id of long) ledger.longDelayed.delete(id);
  const ranHere = long.filter((id) => !ranBefore.has(id));
  return {
    report,
    delayedMisplaced,
    schedulers,
    ranOnce: ranHere.filter((id) => ledger.runs.get(id)!.length === 1).length,
    doubled: long.filter((id) => (ledger.runs.get(id)?.length ?? 0) > 1),
    lost: long.filter((id) => !ledger.runs.has(id)),
    ms: 0,
  };
}

function countTwice(ledger: Ledger): number {
  let twice = 0;
  for (const s of SCHEDULERS) twice += checkOccurrences(ledger.occurrences.get(s.id) ?? [], s.period).twice.length;
  return twice;
}

/** The figures as lines for docs/migrating.md. */
export function figuresText(f: LiveFigures): string {
  const v = f.verdict;
  return [
    `deployment: ${f.size.waiting} waiting, ${f.size.delayedLong} delayed for days, ${f.size.delayedShort} delayed by seconds, ${f.size.prioritized} prioritized, ${f.size.failed} failed, ${f.size.flows} flows, ${f.size.dedup} deduplicated, 3 schedulers; ${f.size.producers} producers adding every ${f.size.addEveryMs} ms for ${f.size.liveMs / 1000} s`,
    `jobs added: ${v.added} (${v.addedBySide.bullmq} to BullMQ, ${v.addedBySide.hopper} to Hopper); ran: ${v.ran} (${v.ranBySide.bullmq} in BullMQ, ${v.ranBySide.hopper} in Hopper)`,
    `moved by the bridge (per state, over its runs): ${JSON.stringify(f.moved)}; the last run: ${JSON.stringify(f.lastReport.moved)}, already in Hopper ${f.lastReport.alreadyThere}, schedulers ${f.lastReport.schedulers}, lost ${f.lastReport.lost}, ended ${f.lastReport.ended}`,
    `bridge killed ${f.kills} times (SIGKILL), restarts refused while the killed run's lock was held: ${f.refusedWhileLocked}`,
    `switch: ${(f.switchMs / 1000).toFixed(1)} s from the bridge's start to the last job run; lost ${v.lost.length}, duplicates ${v.doubled.length}, unknown ${v.unknown.length}`,
    `delayed by seconds: ${v.lateness.count} ran, none early: ${v.early.length === 0}; lateness p50 ${v.lateness.p50} ms, p99 ${v.lateness.p99} ms, max ${v.lateness.max} ms`,
    `schedulers: ${Object.entries(f.occurrences)
      .map(
        ([id, o]) =>
          `${id} ${o.runs} runs (${o.sides}), ${o.twice.length} twice, ${o.missing.length} missing, ${o.noInstant} without an instant`,
      )
      .join('; ')}`,
    `deduplication ids from before the switch lost: ${f.dedupLost.length}; live ones split across the sides: ${f.dedupSplit.length} of ${LIVE_DEDUP_KEYS}; flows with wrong children's values: ${f.flowsWrong.length}; long-delayed misplaced: ${f.delayedMisplaced.length}`,
    `way back: ${JSON.stringify(f.back.report.moved)}, schedulers ${f.back.report.schedulers}, lost ${f.back.report.lost}, ${(f.back.ms / 1000).toFixed(1)} s; then BullMQ ran ${f.back.ranOnce} once, duplicates ${f.back.doubled.length}, lost ${f.back.lost.length}; occurrences twice over both switches ${f.back.occurrencesTwice}`,
  ].join('\n');
}
