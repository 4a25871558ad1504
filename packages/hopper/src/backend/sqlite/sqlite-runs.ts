/**
 * Runs, costs and tenant budgets on SQLite, and the add kept for an active job
 * (deduplication.keepLastIfActive): the counterparts of continueJob.lua, reportCost.lua,
 * cancelRun.lua, readBudget.lua, the budget part of addJobs.lua and addKeptJob (includes/base).
 * Every function runs inside one write transaction (a `Tx`) of the caller.
 *
 * Storage: `runs` (one row per run: its latest turn, its cost, its cancel reason; expires
 * RUN_TTL_MS after its last change, as the Redis hash), the job columns `run_id`,
 * `reported_cost`, `budget_tenant` and `budget_cost` (the Redis job fields ru, rc, bt, bc),
 * `budget_window` (one row per charge: a tenant's sliding window) and `dedup_next` (the kept add).
 */
import type { AddCharge, NewJob, RunRecord } from '../backend.js';
import { WriteCode } from '../requests.js';
import { BudgetExceededError, CostAboveRateLimitError } from '../../job/errors.js';
import type { SqliteStore } from './database.js';
import type { Tx } from './sqlite-ops.js';
import { readLimits, type QueueLimits } from './sqlite-limits.js';
import { groupOfOpts } from './sqlite-groups.js';
import { weightedLimitOf } from './sqlite-group-weights.js';

/** How long a run's record outlives its last change (30 days, as RUN_TTL in continueJob.lua). */
const RUN_TTL_MS = 2_592_000_000;

/** The run, cost and keep columns of a job row (migration 4). */
export interface RunColumns {
  dedup_keep: number;
  run_id: string | null;
  reported_cost: number | null;
  budget_tenant: string | null;
  budget_cost: number | null;
}

interface RunRow {
  last_turn: string | null;
  cost: number;
  cancel_reason: string | null;
}

/** A run's row, unless it expired. */
function readRun(s: SqliteStore, qid: number, runId: string, now: number): RunRow | undefined {
  return s.stmt('SELECT last_turn, cost, cancel_reason FROM runs WHERE qid = ? AND run_id = ? AND expires_at > ?').get(qid, runId, now) as
    RunRow | undefined;
}

/** Writes (creating it if needed) a run's row, renewing its expiry. */
function writeRun(tx: Tx, runId: string, fields: { last_turn?: string; cost?: number; cancel_reason?: string }): void {
  tx.s.stmt('DELETE FROM runs WHERE qid = ? AND run_id = ? AND expires_at <= ?').run(tx.qid, runId, tx.now);
  tx.s.stmt('INSERT OR IGNORE INTO runs (qid, run_id, cost, expires_at) VALUES (?, ?, 0, ?)').run(tx.qid, runId, tx.now + RUN_TTL_MS);
  const names = Object.keys(fields) as (keyof typeof fields)[];
  const sets = [...names.map((n) => `${n} = ?`), 'expires_at = ?'].join(', ');
  tx.s.stmt(`UPDATE runs SET ${sets} WHERE qid = ? AND run_id = ?`).run(...names.map((n) => fields[n]), tx.now + RUN_TTL_MS, tx.qid, runId);
}

/**
 * The run checks of continueJob.lua, before the next turn is added: a cancelled run adds no turn
 * (-5 with the reason), nor one whose cost reached `maxCost` (-7 with the cost). Returns the
 * run's cost (seeded from the current job's reported cost when the run starts) when it may go on.
 */
export function checkRun(
  tx: Tx,
  jobId: string,
  run: { id: string; maxCost?: number },
): { code: WriteCode; record: string } | { cost: number } {
  const row = readRun(tx.s, tx.qid, run.id, tx.now);
  if (row?.cancel_reason != null) return { code: WriteCode.RefusedCancelled, record: row.cancel_reason };
  const job = tx.job(jobId) as unknown as RunColumns | undefined;
  const cost = row ? row.cost : (job?.reported_cost ?? 0);
  if (run.maxCost !== undefined && cost >= run.maxCost) return { code: WriteCode.OverBudget, record: String(cost) };
  return { cost };
}

/** Records the run's latest turn and cost after continueJob added (or found) the next turn. */
export function recordTurn(tx: Tx, runId: string, nextId: string, cost: number): void {
  writeRun(tx, runId, { last_turn: nextId, cost });
}

/**
 * reportCost.lua, after the fence check: replaces the job's reported cost, corrects its budget
 * charge while the charge is still in its tenant's window, and adds the difference to its run's
 * cost when it is a turn of a run (or the run's record exists). Returns the run's cost, if any.
 */
export function reportCost(tx: Tx, id: string, runId: string, cost: number): number | undefined {
  const job = tx.job(id) as unknown as RunColumns;
  const delta = cost - (job.reported_cost ?? 0);
  tx.set(id, { reported_cost: cost });
  if (job.budget_tenant !== null) {
    const changed = tx.s
      .stmt('UPDATE budget_window SET cost = ? WHERE qid = ? AND tenant = ? AND job_id = ?')
      .run(cost, tx.qid, job.budget_tenant, id).changes;
    if (changed > 0) tx.set(id, { budget_cost: cost });
  }
  const run = readRun(tx.s, tx.qid, runId, tx.now);
  if (job.run_id === null && !run) return undefined;
  const total = (run?.cost ?? 0) + delta;
  writeRun(tx, runId, { cost: total });
  return total;
}

/** cancelRun.lua: marks the run cancelled (the first reason stays); returns its latest turn, if it continued. */
export function cancelRun(tx: Tx, runId: string, reason: string): string | undefined {
  const row = readRun(tx.s, tx.qid, runId, tx.now);
  writeRun(tx, runId, row?.cancel_reason != null ? {} : { cancel_reason: reason });
  return row?.last_turn ?? undefined;
}

/** A run's record (reads only); undefined when it has none. */
export function getRun(s: SqliteStore, qid: number, runId: string, now: number): RunRecord | undefined {
  const row = readRun(s, qid, runId, now);
  if (!row) return undefined;
  return { lastTurn: row.last_turn ?? undefined, cost: row.cost, cancelReason: row.cancel_reason ?? undefined };
}

/** A tenant's use of the queue's budget: the costs charged in the last `windowMs` (reads only). */
export function budgetUse(s: SqliteStore, qid: number, tenant: string, windowMs: number, now: number): number {
  const { use } = s
    .stmt('SELECT TOTAL(cost) AS use FROM budget_window WHERE qid = ? AND tenant = ? AND at > ?')
    .get(qid, tenant, now - windowMs) as {
    use: number;
  };
  return Math.max(use, 0);
}

/** A refused job of an add: 3 its tenant's budget (detail: the use), 4 the queue's weighted limit, 5 its group's ('max:durationMs'). */
export interface Refusal {
  code: 3 | 4 | 5;
  detail: string;
}

/**
 * The cost checks of one add call (addJobs.lua's read phase): the queue's weighted limit, each
 * group's weighted limit and the tenants' budget windows, read once; each new job is judged in order, and a job let in reserves
 * its cost for the later jobs of the call.
 */
export class AddCosts {
  private readonly weighted: { max: number; duration: number } | undefined;
  private readonly tenants = new Map<string, number>();
  private readonly limits: QueueLimits;
  /** Each group's weighted limit (read once per call), or undefined when its limit counts jobs. */
  private readonly groupLimits = new Map<string, { max: number; duration: number } | undefined>();

  constructor(
    private readonly tx: Tx,
    private readonly jobs: NewJob[],
    private readonly charge: AddCharge | undefined,
  ) {
    const limits = readLimits(tx.s, tx.qid);
    this.limits = limits;
    this.weighted =
      limits.lwt && limits.lmax !== undefined && limits.ldur !== undefined ? { max: limits.lmax, duration: limits.ldur } : undefined;
  }

  /** Whether any job of the call has a cost (else nothing is checked or charged). */
  static needed(jobs: NewJob[]): boolean {
    return jobs.some((job) => job.cost !== undefined);
  }

  /** Judges new job `j`: its refusal, or undefined (its budget charge then reserved). */
  judge(j: number): Refusal | undefined {
    const c = this.jobs[j].cost;
    if (c === undefined || c < 0) return undefined;
    if (this.weighted && c > this.weighted.max) return { code: 4, detail: `${this.weighted.max}:${this.weighted.duration}` };
    const g = groupOfOpts(this.jobs[j].opts)?.id;
    const gl = g === undefined ? undefined : this.groupLimit(g);
    if (gl && c > gl.max) return { code: 5, detail: `${gl.max}:${gl.duration}` };
    const budget = this.charge?.budget;
    const t = budget?.tenants[j] ?? '';
    if (budget && t !== '' && c > 0) {
      let use = this.tenants.get(t);
      if (use === undefined) {
        // Charges out of the window are dropped at the first add that reads the tenant.
        this.tx.s
          .stmt('DELETE FROM budget_window WHERE qid = ? AND tenant = ? AND at <= ?')
          .run(this.tx.qid, t, this.tx.now - budget.window);
        use = budgetUse(this.tx.s, this.tx.qid, t, budget.window, this.tx.now);
      }
      if (use + c > budget.limit) return { code: 3, detail: String(use) };
      this.tenants.set(t, use + c);
    }
    return undefined;
  }

  /** Group `g`'s weighted limit: its own limiter, else the queue's default (addJobs.lua groupWeightedLimit). */
  private groupLimit(g: string): { max: number; duration: number } | undefined {
    if (!this.groupLimits.has(g)) {
      const row = this.tx.s.stmt('SELECT lm, ld, lwt FROM groups WHERE qid = ? AND id = ?').get(this.tx.qid, g) as
        { lm: number | null; ld: number | null; lwt: number | null } | undefined;
      this.groupLimits.set(g, weightedLimitOf(row, this.limits));
    }
    return this.groupLimits.get(g);
  }

  /** Charges new job `j`, added as `id`, to its tenant's window (job.reportCost corrects it). */
  charged(j: number, id: string): void {
    const c = this.jobs[j].cost;
    const t = this.charge?.budget?.tenants[j] ?? '';
    if (c === undefined || t === '' || c <= 0) return;
    this.tx.s
      .stmt('INSERT INTO budget_window (qid, tenant, at, job_id, cost) VALUES (?, ?, ?, ?, ?)')
      .run(this.tx.qid, t, this.tx.now, id, c);
    this.tx.set(id, { budget_tenant: t, budget_cost: c });
  }

  /** The typed error of a refused job (as RedisQueueBackend.addRefusal). */
  static error(queueName: string, jobs: NewJob[], charge: AddCharge | undefined, j: number, refusal: Refusal): Error {
    const cost = jobs[j].cost ?? 0;
    if (refusal.code === 3 && charge?.budget) {
      const { limit, window, tenants } = charge.budget;
      return BudgetExceededError.of(queueName, tenants[j], Number(refusal.detail), cost, limit, window);
    }
    const [max, duration] = refusal.detail.split(':').map(Number);
    if (refusal.code === 5) return CostAboveRateLimitError.of(queueName, cost, max, duration, groupOfOpts(jobs[j].opts)?.id ?? '');
    return CostAboveRateLimitError.of(queueName, cost, max, duration);
  }
}

/**
 * keepLastIfActive (addJobs.lua's keepForActive): keeps `job` (the last add wins) for when active
 * job `id` finishes; the job is marked, and its deduplication id no longer expires while it runs.
 */
export function keepForActive(tx: Tx, id: string, dedupId: string, job: NewJob): void {
  tx.s
    .stmt(
      `INSERT OR REPLACE INTO dedup_next (qid, dedup_id, name, data, opts, custom_id, priority, delay, lifo)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(tx.qid, dedupId, job.name, job.data, job.opts, job.customId, job.priority, job.delay, job.lifo ? 1 : 0);
  tx.s.stmt('UPDATE dedup SET expires_at = NULL WHERE qid = ? AND dedup_id = ?').run(tx.qid, dedupId);
  tx.set(id, { dedup_id: dedupId, dedup_keep: 1 });
}

/** Forgets the add kept under `dedupId` (its deduplication key was removed). */
export function forgetKept(tx: Tx, dedupId: string): void {
  tx.s.stmt('DELETE FROM dedup_next WHERE qid = ? AND dedup_id = ?').run(tx.qid, dedupId);
}

/**
 * addKeptJob (includes/base): once the marked job finished for good and freed `dedupId`, the add
 * kept for it becomes a job holding the deduplication id in its turn.
 */
export function addKeptJob(tx: Tx, dedupId: string): void {
  const kept = tx.s
    .stmt('SELECT name, data, opts, custom_id, priority, delay, lifo FROM dedup_next WHERE qid = ? AND dedup_id = ?')
    .get(tx.qid, dedupId) as
    { name: string; data: string; opts: string; custom_id: string; priority: number; delay: number; lifo: number } | undefined;
  if (!kept) return;
  forgetKept(tx, dedupId);
  if (kept.custom_id !== '' && tx.exists(kept.custom_id)) {
    // A custom id taken meanwhile: as for any add of an existing id, nothing is created.
    tx.emit('duplicated', { jobId: kept.custom_id });
    return;
  }
  const id = kept.custom_id !== '' ? kept.custom_id : tx.nextJobId();
  tx.s
    .stmt(
      `INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority, delay, dedup_id, grp)
       VALUES (?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?)`,
    )
    .run(
      tx.qid,
      id,
      kept.name,
      kept.data,
      kept.opts,
      tx.now,
      kept.priority,
      Math.max(kept.delay, 0),
      dedupId,
      groupOfOpts(kept.opts)?.id ?? null,
    );
  tx.s.stmt('INSERT OR REPLACE INTO dedup (qid, dedup_id, job_id, expires_at) VALUES (?, ?, ?, NULL)').run(tx.qid, dedupId, id);
  let state: string = 'delayed';
  let due = 0;
  if (kept.delay > 0) {
    due = tx.now + kept.delay;
    tx.pushDelayed(id, due);
  } else {
    state = tx.pushReady(id, kept.priority, kept.lifo === 1 && kept.priority === 0);
    tx.signalWork();
  }
  tx.emit('added', {
    ids: JSON.stringify([id]),
    names: JSON.stringify([kept.name]),
    states: JSON.stringify([state]),
    delays: JSON.stringify([due]),
  });
}
