/**
 * The driver of the model-based tests: runs each command against the real backend (through the
 * seam, with the model's clock as `now`) and against the model (model-support.ts), then checks
 * that every job's state and attempts, every group's counters and every parent's dependencies
 * agree, with the invariant audit (every `auditEvery` steps, and at the end; it also checks each
 * group's counted active jobs, `a`, against the jobs actually active).
 */
import { expect } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import {
  writeApplied,
  type ChildFailurePolicy,
  type ClaimRequest,
  type FlowNodeWrite,
  type NewJob,
  type QueueBackend,
} from '../../src/backend/backend.js';
import { cancelChildren } from '../../src/api/flows.js';
import { LOCK_MS, MAX_STALLED, Model } from './model-support.js';

export interface Fenced {
  id: string;
  token: string;
  attempt: number;
}

/** One node of a flow to add: its options, failure policy (for a child) and children. */
export interface FlowSpec {
  priority: number;
  delay: number;
  attempts: number;
  policy: ChildFailurePolicy;
  children: FlowSpec[];
}

const NO_CLAIM: ClaimRequest = { count: 0, lockMs: LOCK_MS, tokenPrefix: 'unused:' };
const CANCEL_REASON = 'CancelledError: model';

function newJob(priority: number, delay: number, group?: string): NewJob {
  const opts = group === undefined ? '' : JSON.stringify({ group: { id: group } });
  return { name: 'm', data: '{}', opts, customId: '', priority, delay, lifo: false, timestamp: 0 };
}

export class Harness {
  readonly model = new Model();
  held: Fenced[] = [];
  staleFences: Fenced[] = [];
  private claims = 0;
  private step = 0;

  private constructor(
    readonly backend: QueueBackend,
    private readonly prefix: string,
    /** Groups are in use: the claim order between groups is the engine's (checked, not predicted). */
    private readonly grouped: boolean,
    private readonly auditEvery: number,
  ) {}

  static async open(
    env: { url: string; prefix: string; queueName(hint?: string): string },
    options: { grouped?: boolean; auditEvery?: number; childFailure?: 'fail' | 'wait' } = {},
  ): Promise<Harness> {
    const backend = createBackend({ connection: env.url, prefix: env.prefix, queueName: env.queueName('model'), role: 'command' });
    await backend.initQueue({ maxEvents: 100, epoch: 'model', childFailure: options.childFailure });
    const harness = new Harness(backend, env.prefix, options.grouped ?? false, options.auditEvery ?? 5);
    harness.model.childFailure = options.childFailure ?? 'wait';
    return harness;
  }

  async close(): Promise<void> {
    await this.backend.close();
  }

  async add(opts: { priority: number; delay: number; attempts: number; group?: string }): Promise<void> {
    const expected = this.model.add(opts);
    const { ids } = await this.backend.addJobs([newJob(opts.priority, opts.delay, opts.group)], undefined, this.model.now);
    expect(ids).toEqual([expected]);
  }

  async claim(count: number): Promise<void> {
    const prefix = `w:${++this.claims}:`;
    const result = await this.backend.claim({ count, lockMs: LOCK_MS, tokenPrefix: prefix }, this.model.now);
    const taken = result.jobs.map((j) => j.id);
    if (this.grouped) this.model.claimGrouped(count, prefix, taken);
    else expect(taken).toEqual(this.model.claim(count, prefix));
    this.held.push(...result.jobs.map((j) => ({ id: j.id, token: j.token, attempt: j.attemptsStarted })));
  }

  /** Completes (or fails) the `pick`-th held job; false when none is held. */
  async complete(pick: number): Promise<boolean> {
    if (this.held.length === 0) return false;
    const fence = this.held.splice(pick % this.held.length, 1)[0];
    const expected = this.model.complete(fence.id);
    const { codes } = await this.backend.complete([{ ...fence, returnvalue: 'null', keep: { kind: 'keep' } }], NO_CLAIM, this.model.now);
    expect({ complete: fence.id, code: codes[0] }).toEqual({ complete: fence.id, code: expected });
    return true;
  }

  async fail(pick: number, retryDelay: number): Promise<boolean> {
    if (this.held.length === 0) return false;
    const fence = this.held.splice(pick % this.held.length, 1)[0];
    const exhausted = this.model.exhausted(fence.id);
    const expected = this.model.fail(fence.id, retryDelay);
    const failure = {
      ...fence,
      reason: 'x',
      stack: '',
      stackTraceLimit: 1,
      retryDelay: exhausted ? -2 : retryDelay,
      keep: { kind: 'keep' as const },
    };
    const { codes } = await this.backend.fail([failure], NO_CLAIM, this.model.now);
    expect({ fail: fence.id, code: codes[0] }).toEqual({ fail: fence.id, code: expected });
    return true;
  }

  /** The worker holding the jobs dies: its fences go stale (their locks expire later). */
  crash(): void {
    this.staleFences.push(...this.held);
    this.held = [];
  }

  /** A crashed attempt completes late: it succeeds only if that attempt still holds the job. */
  async stale(pick: number): Promise<void> {
    if (this.staleFences.length === 0) return;
    const fence = this.staleFences[pick % this.staleFences.length];
    const job = this.model.jobs.get(fence.id)!;
    const stillHolds = job.state === 'active' && job.token === fence.token && job.attemptsStarted === fence.attempt;
    const result = await this.backend.complete([{ ...fence, returnvalue: '"stale"', keep: { kind: 'keep' } }], NO_CLAIM, this.model.now);
    if (stillHolds) this.model.complete(fence.id);
    else this.model.promoteDue();
    expect(writeApplied(result.codes[0])).toBe(stillHolds);
  }

  advance(ms: number): void {
    this.model.now += ms;
  }

  async rescue(): Promise<void> {
    this.model.rescue();
    await this.backend.rescueStalled(
      { maxStalledCount: MAX_STALLED, limit: 1000, intervalMs: 1, force: true, failKeep: { kind: 'keep' }, eventsMaxAgeMs: 0 },
      this.model.now,
    );
    // Rescued jobs are no longer held by anyone.
    this.held = this.held.filter((f) => this.model.jobs.get(f.id)?.token === f.token);
  }

  /** A job to act on: the `pick`-th of those matching `filter` (else of all jobs), or undefined. */
  pickJob(pick: number, filter: (state: string) => boolean): string | undefined {
    const all = [...this.model.jobs.values()];
    const matching = all.filter((j) => filter(j.state));
    const from = matching.length > 0 ? matching : all;
    return from.length === 0 ? undefined : from[pick % from.length].id;
  }

  /** Cancels a job as Queue.cancelJob does (and, for a parent, its pending children). */
  async cancel(pick: number): Promise<void> {
    const id = this.pickJob(pick, (s) => s !== 'completed' && s !== 'failed');
    if (id === undefined) return;
    const expected = this.model.cancel(id, CANCEL_REASON, true);
    const { kind } = await this.backend.cancelJob(id, CANCEL_REASON, { kind: 'keep' }, this.model.now);
    const code = { cancelled: 1, signalled: 2, missing: 0, finished: -3, pendingRun: -5 }[kind];
    expect({ cancel: id, code }).toEqual({ cancel: id, code: expected });
    if (kind === 'cancelled' || kind === 'signalled') {
      const backend = this.backend;
      await cancelChildren(
        this.prefix,
        () => backend,
        backend.queueName,
        id,
        CANCEL_REASON,
        () => this.model.now,
      );
    }
  }

  /** retryJobs of one failed job (by id). */
  async retry(pick: number): Promise<void> {
    const id = this.pickJob(pick, (s) => s === 'failed');
    if (id === undefined) return;
    const expected = this.model.retry(id, 'failed');
    const { moved } = await this.backend.retryJobs('failed', { count: 1, timestamp: 0, ids: [id] });
    expect({ retry: id, moved }).toEqual({ retry: id, moved: [expected === 1] });
  }

  async pauseGroup(g: string, paused: boolean): Promise<void> {
    const group = this.model.group(g);
    const expected = group.paused !== paused;
    group.paused = paused;
    expect(await this.backend.configureGroup(g, paused ? 'pause' : 'resume')).toBe(expected);
  }

  async setGroupConcurrency(g: string, concurrency: number | undefined): Promise<void> {
    this.model.setConcurrency(g, concurrency);
    await this.backend.configureGroup(g, 'set', { concurrency: concurrency ?? null });
  }

  async setGroupLimiter(g: string, limiter: { max: number; duration: number } | undefined): Promise<void> {
    this.model.group(g).limiter = limiter;
    await this.backend.configureGroup(g, 'set', { limiter: limiter ?? null });
  }

  /** Adds a flow (a tree, pre-order, one queue); ids are the queue's next ones, in node order. */
  async addFlow(root: FlowSpec): Promise<void> {
    const nodes: FlowNodeWrite[] = [];
    const expected: string[] = [];
    const visit = (spec: FlowSpec, parentIndex: number, parentId: string | undefined): void => {
      const id = this.model.add(spec, parentId === undefined ? undefined : { id: parentId, policy: spec.policy }, spec.children.length > 0);
      expected.push(id);
      nodes.push({
        ...newJob(spec.priority, spec.delay),
        queue: this.backend.queueName,
        parentIndex,
        policy: parentId === undefined ? 'none' : spec.policy,
        sealed: true,
      });
      const index = nodes.length;
      for (const child of spec.children) visit(child, index, id);
    };
    visit(root, 0, undefined);
    const result = await this.backend.addFlow(nodes, undefined, this.model.now);
    expect(result.ok && result.ids).toEqual(expected);
  }

  /** Compares every job, group and parent with the model; runs the audit every few steps. */
  async check(final = false): Promise<void> {
    const model = this.model;
    const ids = [...model.jobs.keys()];
    const stored = await this.backend.getJobs(ids);
    ids.forEach((id, i) => {
      const job = model.jobs.get(id)!;
      const real = stored[i];
      // A job that ended while cancelled ended as cancelled: its failed reason is the cancel reason.
      const cancelledEnd = job.state === 'failed' && job.cancelled !== undefined;
      expect({
        id,
        state: real?.state,
        made: real?.attemptsMade,
        started: real?.attemptsStarted,
        reason: cancelledEnd ? real?.failedReason : undefined,
      }).toEqual({
        id,
        state: job.state,
        made: job.attemptsMade,
        started: job.attemptsStarted,
        reason: cancelledEnd ? job.cancelled : undefined,
      });
    });
    for (const [g, group] of model.groups) {
      const real = await this.backend.getGroup(g);
      const ready = model.groupReady(g);
      expect({
        group: g,
        paused: real?.status === 'paused',
        active: real?.active ?? 0,
        waiting: real?.waiting ?? 0,
        prioritized: real?.prioritized ?? 0,
      }).toEqual({
        group: g,
        paused: group.paused,
        active: [...model.jobs.values()].filter((j) => j.group === g && j.state === 'active').length,
        waiting: ready.filter((j) => j.priority === 0).length,
        prioritized: ready.filter((j) => j.priority > 0).length,
      });
    }
    for (const job of model.jobs.values()) {
      if (job.pending.size + job.processed.size + job.failedChildren.size + job.ignoredChildren.size === 0) continue;
      expect({ parent: job.id, ...(await this.backend.getDependencyCounts(job.id)) }).toEqual({
        parent: job.id,
        processed: job.processed.size,
        unprocessed: job.pending.size,
        failed: job.failedChildren.size,
        ignored: job.ignoredChildren.size,
      });
    }
    if (final || ++this.step % this.auditEvery === 0) expect(await this.backend.checkInvariants()).toEqual([]);
  }
}

/** Every command the model tests generate (each file draws from a subset). */
export type ModelCommand =
  | { kind: 'add'; priority: number; delay: number; attempts: number; group?: string }
  | { kind: 'flow'; root: FlowSpec }
  | { kind: 'claim'; count: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number; retryDelay: number }
  | { kind: 'crash' }
  | { kind: 'stale'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'rescue' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'retry'; pick: number }
  | { kind: 'pause'; group: string; paused: boolean }
  | { kind: 'concurrency'; group: string; concurrency: number | undefined }
  | { kind: 'limiter'; group: string; on: boolean };

/** Runs one command on the harness (the real backend and the model). */
export async function applyCommand(h: Harness, cmd: ModelCommand): Promise<void> {
  switch (cmd.kind) {
    case 'add':
      return h.add(cmd);
    case 'flow':
      return h.addFlow(cmd.root);
    case 'claim':
      return h.claim(cmd.count);
    case 'complete':
      await h.complete(cmd.pick);
      return;
    case 'fail':
      await h.fail(cmd.pick, cmd.retryDelay);
      return;
    case 'crash':
      return h.crash();
    case 'stale':
      return h.stale(cmd.pick);
    case 'advance':
      return h.advance(cmd.ms);
    case 'rescue':
      return h.rescue();
    case 'cancel':
      return h.cancel(cmd.pick);
    case 'retry':
      return h.retry(cmd.pick);
    case 'pause':
      return h.pauseGroup(cmd.group, cmd.paused);
    case 'concurrency':
      return h.setGroupConcurrency(cmd.group, cmd.concurrency);
    case 'limiter':
      return h.setGroupLimiter(cmd.group, cmd.on ? { max: 1, duration: 500 } : undefined);
  }
}

/** Runs `commands` on a fresh harness with `apply`, checking after every step and at the end. */
export async function runModel<C>(
  env: { url: string; prefix: string; queueName(hint?: string): string },
  options: Parameters<typeof Harness.open>[1],
  commands: C[],
  apply: (harness: Harness, command: C) => Promise<unknown>,
): Promise<void> {
  const harness = await Harness.open(env, options);
  try {
    for (const command of commands) {
      await apply(harness, command);
      await harness.check();
    }
    await harness.check(true);
  } finally {
    await harness.close();
  }
}
