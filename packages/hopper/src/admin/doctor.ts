/**
 * `hopper doctor`: audits a live deployment (the Redis server and every queue under a prefix)
 * against the mistakes that lose jobs or make a queue fall behind, and says for each what it
 * saw and how to fix it. Reads only: the doctor never changes anything.
 */
import type { ServerFacts } from '../backend/backend.js';
import type { Queue } from '../api/queue.js';
import type { Job } from '../job/job.js';
import type { QueueOverview } from './admin.js';

/** How serious a finding is: `error` loses jobs or stops work; `warning` will hurt; `info` is worth knowing. */
export type Severity = 'error' | 'warning' | 'info';

/** One thing the doctor found. */
export interface Finding {
  /** A stable identifier of the check (e.g. `redis-eviction-policy`), for scripts. */
  check: string;
  severity: Severity;
  /** The queue it concerns (absent for the server's findings). */
  queue?: string;
  /** What is wrong, in one sentence. */
  title: string;
  /** What the doctor saw. */
  evidence: string;
  /** What to do about it. */
  fix: string;
}

/** Thresholds of the doctor's checks. */
export interface DoctorOptions {
  /** Ready jobs (waiting + prioritized) above which a queue's backlog is reported. Default 10,000. */
  backlog?: number;
  /** Age of the oldest waiting job above which it is reported (ms). Default 5 minutes. */
  oldestWaitingMs?: number;
  /** The workers' lock duration (ms), to compare run times with. Default 30,000 (Hopper's default). */
  lockDurationMs?: number;
  /** Jobs sampled per state and queue to judge options and run times. Default 200. */
  sample?: number;
  /** A scheduler whose next run is overdue by more than this (ms) is late. Default 60,000. */
  schedulerLateMs?: number;
  /** Finished jobs kept (completed + failed) above which retention is reported. Default 100,000. */
  retainedFinished?: number;
  /** Median run time (ms) from which a job name counts as slow beside fast ones. Default 10,000. */
  slowRunMs?: number;
}

/** What `Admin.doctor` returns. */
export interface DoctorReport {
  /** When the audit ran (ms). */
  checkedAt: number;
  /** The server's facts the checks used. */
  server: ServerFacts;
  /** The queues audited. */
  queues: string[];
  /** Every finding, errors first. */
  findings: Finding[];
}

const DEFAULTS = {
  backlog: 10_000,
  oldestWaitingMs: 5 * 60_000,
  lockDurationMs: 30_000,
  sample: 200,
  schedulerLateMs: 60_000,
  retainedFinished: 100_000,
  slowRunMs: 10_000,
};
const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'fcall', 'evalsha_ro', 'eval_ro', 'fcall_ro']);
const STALL_REASON = 'stalled more than allowable limit';
const RANK: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;
const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;

/** The server's checks. `pending` is the number of jobs not yet finished across the audited queues. */
export function checkServer(facts: ServerFacts, pending: number): Finding[] {
  const out: Finding[] = [];
  if (facts.maxmemoryPolicy !== undefined && facts.maxmemoryPolicy !== 'noeviction') {
    out.push({
      check: 'redis-eviction-policy',
      severity: 'error',
      title: `Redis may evict job keys (maxmemory-policy ${facts.maxmemoryPolicy})`,
      evidence: `maxmemory-policy is "${facts.maxmemoryPolicy}": when memory is full Redis deletes keys, jobs included, without telling anyone.`,
      fix: 'Set `maxmemory-policy noeviction` (CONFIG SET maxmemory-policy noeviction, and in redis.conf): full Redis then refuses adds (RedisFullError) instead of losing jobs.',
    });
  }
  if (facts.aof === false && facts.rdb === false && pending > 0) {
    out.push({
      check: 'redis-no-persistence',
      severity: 'warning',
      title: 'Redis keeps nothing on disk while queues hold work',
      evidence: `AOF and RDB snapshots are off; ${pending} unfinished jobs would be lost by a Redis restart.`,
      fix: 'Turn on the append-only file: `appendonly yes` with `appendfsync everysec` (or `always` to lose no acknowledged add).',
    });
  }
  if (facts.maxmemory && facts.usedMemory !== undefined) {
    const ratio = facts.usedMemory / facts.maxmemory;
    if (ratio >= 0.8) {
      out.push({
        check: 'redis-memory-near-limit',
        severity: ratio >= 0.95 ? 'error' : 'warning',
        title: `Redis memory is ${Math.round(ratio * 100)}% of maxmemory`,
        evidence: `used ${mb(facts.usedMemory)} of ${mb(facts.maxmemory)}.`,
        fix: 'Raise maxmemory, keep fewer finished jobs (removeOnComplete / removeOnFail), or drain a backlog; at the limit adds are refused.',
      });
    }
  }
  if (facts.evictedKeys) {
    out.push({
      check: 'redis-evicted-keys',
      severity: 'error',
      title: 'Redis has evicted keys',
      evidence: `evicted_keys is ${facts.evictedKeys} since the server started: some keys were deleted to free memory; job keys may be among them.`,
      fix: 'Set `maxmemory-policy noeviction` and give Redis the memory it needs; audit the queues for jobs that vanished.',
    });
  }
  if (facts.rejectedConnections) {
    out.push({
      check: 'redis-rejected-connections',
      severity: 'warning',
      title: 'Redis has refused connections',
      evidence: `rejected_connections is ${facts.rejectedConnections} since the server started (maxclients reached).`,
      fix: 'Raise `maxclients`, or open fewer connections (each Worker uses two or three; share a Queue per process).',
    });
  }
  const slow = facts.slowlog.filter((e) => SCRIPT_COMMANDS.has(e.command));
  if (slow.length > 0) {
    const worst = Math.max(...slow.map((e) => e.micros));
    out.push({
      check: 'redis-slow-scripts',
      severity: 'warning',
      title: 'Scripts appear in the Redis slow log',
      evidence: `${slow.length} of the last ${facts.slowlog.length} slow-log entries are scripts; the slowest took ${(worst / 1000).toFixed(1)} ms (Redis serves nothing else meanwhile).`,
      fix: 'Look for very large calls (addBulk or clean of huge batches, jobs with very large data) and split them; `SLOWLOG GET` shows the arguments.',
    });
  }
  return out;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** One queue's checks. */
export async function checkQueue(queue: Queue, overview: QueueOverview, now: number, options: DoctorOptions = {}): Promise<Finding[]> {
  const o = { ...DEFAULTS, ...options };
  const out: Finding[] = [];
  const q = queue.name;
  const ready = overview.counts.waiting + overview.counts.prioritized;
  const add = (f: Omit<Finding, 'queue'>): void => {
    out.push({ ...f, queue: q });
  };

  // Options and run times, judged on samples of each state.
  const [pending, completed, failed, active] = await Promise.all([
    queue.getJobs(['waiting', 'prioritized', 'delayed'], 0, o.sample - 1),
    queue.getJobs('completed', 0, o.sample - 1),
    queue.getJobs('failed', 0, o.sample - 1),
    queue.getJobs('active', 0, o.sample - 1),
  ]);
  // A dead-letter queue holds letters waiting for a decision: no worker, backlog or age finding.
  const deadLetterQueue = pending.length > 0 && pending.every((j) => j.deadLetterOrigin);

  if (!deadLetterQueue && ready > 0 && overview.workers === 0 && !overview.paused) {
    add({
      check: 'no-workers',
      severity: 'error',
      title: 'Jobs wait and no worker is running',
      evidence: `${ready} jobs are ready and no worker has registered on the queue (or every one stopped renewing its heartbeat).`,
      fix: 'Start a Worker for this queue, or check that its workers connect to this Redis with the same prefix.',
    });
  }
  if (!deadLetterQueue && ready > o.backlog) {
    add({
      check: 'backlog',
      severity: 'warning',
      title: `Backlog of ${ready} ready jobs`,
      evidence: `${overview.counts.waiting} waiting and ${overview.counts.prioritized} prioritized (threshold ${o.backlog}).`,
      fix: 'Add workers or concurrency if the downstream service can take it; otherwise rate-limit producers.',
    });
  }
  if (!deadLetterQueue && overview.oldestWaitingMs !== null && overview.oldestWaitingMs > o.oldestWaitingMs) {
    add({
      check: 'oldest-waiting',
      severity: 'warning',
      title: `The oldest waiting job has waited ${seconds(overview.oldestWaitingMs)}`,
      evidence: `threshold ${seconds(o.oldestWaitingMs)}${overview.paused ? '; the queue is paused' : ''}.`,
      fix: overview.paused
        ? 'Resume the queue (`hopper resume`).'
        : 'Add workers or concurrency, or move slow job names to their own queue.',
    });
  }

  const ordinary = [...pending, ...failed].filter((j) => !j.deadLetterOrigin && !j.repeatJobKey);
  const noRetry = ordinary.filter((j) => (j.opts.attempts ?? 1) <= 1);
  if (ordinary.length > 0 && noRetry.length * 2 >= ordinary.length) {
    add({
      check: 'jobs-without-retries',
      severity: 'warning',
      title: 'Jobs are added without retries',
      evidence: `${noRetry.length} of ${ordinary.length} sampled jobs have attempts 1 (job names: ${names(noRetry)}): one transient error fails them for good.`,
      fix: "Add with `attempts` (e.g. 5) and `backoff: { type: 'exponential', delay: 1000 }`, and throw UnrecoverableError for errors a retry cannot fix.",
    });
  }
  const noBackoff = ordinary.filter((j) => (j.opts.attempts ?? 1) > 1 && !j.opts.backoff);
  if (noBackoff.length > 0) {
    add({
      check: 'retries-without-backoff',
      severity: 'warning',
      title: 'Retries without backoff',
      evidence: `${noBackoff.length} sampled jobs retry at once (job names: ${names(noBackoff)}): a failing downstream is hammered.`,
      fix: "Add `backoff: { type: 'exponential', delay: 1000 }` (with jitter for many jobs).",
    });
  }
  const unbounded = ordinary.filter((j) => (j.opts.attempts ?? 1) >= 100);
  if (unbounded.length > 0) {
    add({
      check: 'unbounded-retries',
      severity: 'warning',
      title: 'Retries that practically never end',
      evidence: `${unbounded.length} sampled jobs allow ${Math.max(...unbounded.map((j) => j.opts.attempts ?? 0))} attempts: a poison job keeps failing for days.`,
      fix: 'Bound attempts (5 to 20 with exponential backoff) and send what is left to a dead-letter queue (`deadLetter: { queue }`).',
    });
  }
  const kept = overview.counts.completed + overview.counts.failed;
  if (kept > o.retainedFinished) {
    add({
      check: 'no-retention',
      severity: 'warning',
      title: `${kept} finished jobs are kept`,
      evidence: `${overview.counts.completed} completed and ${overview.counts.failed} failed jobs stay in Redis memory.`,
      fix: 'Set `removeOnComplete` and `removeOnFail` (e.g. `{ age: 86400, count: 10000 }`) on the jobs, or clean periodically (`hopper clean`).',
    });
  }
  const stalledOut = failed.filter((j) => (j.failedReason ?? '').includes(STALL_REASON));
  const stalledOnce = [...pending, ...active].filter((j) => j.stalledCounter > 0);
  if (stalledOut.length > 0 || stalledOnce.length > 0) {
    add({
      check: 'stalled-jobs',
      severity: stalledOut.length > 0 ? 'error' : 'warning',
      title: 'Jobs stall (their worker died or stopped renewing their lock)',
      evidence: `${stalledOut.length} sampled jobs failed for stalling too often, ${stalledOnce.length} others stalled at least once.`,
      fix: 'Find why workers die (OOM kills, deploys without graceful shutdown) or block their event loop (CPU-heavy processors: use a sandboxed processor); give long jobs a longer lockDuration.',
    });
  }
  const letters = [...pending, ...completed, ...failed].filter((j) => j.deadLetterOrigin);
  if (letters.length > 0) {
    const newest = Math.max(...letters.map((j) => j.deadLetterOrigin?.failedOn ?? j.timestamp));
    add({
      check: 'dead-letters',
      severity: 'warning',
      title: 'Dead letters wait for a decision',
      evidence: `${letters.length}${letters.length >= o.sample ? '+' : ''} dead letters from ${[...new Set(letters.map((j) => j.deadLetterOrigin?.queue))].join(', ')}; the newest failed ${seconds(now - newest)} ago.`,
      fix: 'Fix the cause, then replay them (`hopper dlq replay`) or remove them.',
    });
  }
  const runs = completed
    .filter((j) => j.processedOn && j.finishedOn)
    .map((j) => ({ name: j.name, ms: (j.finishedOn as number) - (j.processedOn as number) }));
  if (runs.length >= 5) {
    const p95 = percentile(
      runs.map((r) => r.ms),
      0.95,
    );
    if (p95 >= 0.8 * o.lockDurationMs) {
      add({
        check: 'run-time-near-lock',
        severity: 'warning',
        title: 'Jobs run almost as long as their lock',
        evidence: `95th percentile run time ${seconds(p95)} against a lock of ${seconds(o.lockDurationMs)}: a blocked event loop or a slow renewal makes them stall and run twice.`,
        fix: 'Raise the Worker `lockDuration`, keep the event loop free (sandboxed processor for CPU work), or split the job into steps.',
      });
    }
    const byName = new Map<string, number[]>();
    for (const r of runs) byName.set(r.name, [...(byName.get(r.name) ?? []), r.ms]);
    const medians = [...byName].filter(([, ms]) => ms.length >= 3).map(([name, ms]) => ({ name, median: percentile(ms, 0.5) }));
    if (medians.length >= 2) {
      medians.sort((a, b) => a.median - b.median);
      const fast = medians[0];
      const slow = medians[medians.length - 1];
      if (slow.median >= o.slowRunMs && slow.median >= 20 * Math.max(fast.median, 1)) {
        add({
          check: 'mixed-durations',
          severity: 'warning',
          title: 'Very slow and very fast jobs share the queue',
          evidence: `"${slow.name}" takes ${seconds(slow.median)} (median), "${fast.name}" ${fast.median} ms: while slow jobs hold every slot, fast ones wait.`,
          fix: `Give "${slow.name}" its own queue and workers (or a group with its own concurrency).`,
        });
      }
    }
  }

  for (const s of await queue.getJobSchedulerStates(0, 999, true)) {
    if (!s.paused && !overview.paused && s.next !== undefined && now - s.next > o.schedulerLateMs) {
      add({
        check: 'scheduler-late',
        severity: 'error',
        title: `Scheduler "${s.key}" is late`,
        evidence: `its run due at ${new Date(s.next).toISOString()} has not started (${seconds(now - s.next)} late).`,
        fix: 'Start a worker for the queue (schedulers advance on workers), or check that its workers are not all busy.',
      });
    }
    if (s.skippedByOverlap > 0) {
      add({
        check: 'scheduler-overlap',
        severity: 'warning',
        title: `Scheduler "${s.key}" skipped ${s.skippedByOverlap} runs: the previous run was still going`,
        evidence: `overlap policy "${s.overlap}", ${s.fired} runs so far.`,
        fix: 'Its job takes longer than its interval: make the job faster, the interval longer, or choose another overlap policy.',
      });
    }
    if (s.missed > 0) {
      add({
        check: 'scheduler-missed',
        severity: 'info',
        title: `Scheduler "${s.key}" missed ${s.missed} runs`,
        evidence: `catch-up policy "${s.catchup}", window ${seconds(s.catchupWindow)}: runs fell due while no worker ran or the scheduler was paused.`,
        fix: 'Expected after downtime; if runs must not be lost, use a catch-up policy that runs them (docs/schedules.md).',
      });
    }
  }
  for (const g of await queue.getGroups(0, 999)) {
    if (g.status === 'paused' && g.waiting + g.prioritized > 0) {
      add({
        check: 'group-paused-backlog',
        severity: 'warning',
        title: `Group "${g.id}" is paused with ${g.waiting + g.prioritized} jobs waiting`,
        evidence: 'its jobs do not run until it is resumed.',
        fix: `Resume it (\`queue.resumeGroup('${g.id}')\`) if the pause was not meant to last.`,
      });
    }
  }
  return out;
}

function names(jobs: Job[]): string {
  const set = [...new Set(jobs.map((j) => j.name))];
  return set.slice(0, 5).join(', ') + (set.length > 5 ? ', …' : '');
}

/** Sorts findings: errors first, then by queue and check. */
export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort(
    (a, b) => RANK[a.severity] - RANK[b.severity] || (a.queue ?? '').localeCompare(b.queue ?? '') || a.check.localeCompare(b.check),
  );
}
