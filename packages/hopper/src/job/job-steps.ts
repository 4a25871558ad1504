/**
 * Durable steps and loop continuations of a job (`job.step`, `job.getSteps`, `job.continueWith`):
 * the logic behind those Job methods, kept apart so job.ts stays readable. See docs/steps.md.
 */
import { CancelledError, InvalidDataError, InvalidOptionsError, InvalidStateError, UnrecoverableError } from './errors.js';
import { WriteCode } from '../backend/backend.js';
import { toError } from './failure.js';
import type { Job } from './job.js';
import { toNewJob } from './new-job.js';
import { serialize, type JobsOptions } from './options.js';
import { validateContinueOptions } from '../validation/job-options.js';
import { checkDeadLetterRoute } from './dead-letter-route.js';
import { throwOnWriteCode } from './write-codes.js';
import { SpanKind, TelemetryAttributes, type Span } from '../telemetry/telemetry.js';
import { trace } from '../telemetry/trace.js';
import { showValue } from '../validation/kit.js';

/** Span attributes of a step: its key, and whether its result came from storage (`fn` not run). */
const STEP_KEY = 'hopper.step.key';
const STEP_STORED = 'hopper.step.stored';

/** A step as listed by `job.getSteps()`. */
export interface StepInfo {
  key: string;
  result?: unknown;
  error?: string;
  durationMs: number;
  at: number;
}

/** `job.step(key, fn)`: see the Job method. */
export async function runStep<T>(job: Job, key: string, fn: () => T | Promise<T>): Promise<T> {
  const telemetry = job.ctx.stepTelemetry;
  if (!telemetry) return stepOnce(job, key, fn, undefined);
  // A child span of the attempt's (the processor runs in its context).
  return trace(telemetry, SpanKind.INTERNAL, job.queueName, 'step', key, (span) => stepOnce(job, key, fn, span));
}

async function stepOnce<T>(job: Job, key: string, fn: () => T | Promise<T>, span: Span | undefined): Promise<T> {
  const id = job.requireId();
  if (typeof key !== 'string' || key.length === 0 || key.length > 200) {
    throw new InvalidDataError(`A step key must be a non-empty string of at most 200 characters, got ${showValue(key)}.`);
  }
  await job.ctx.ready();
  const stored = await job.ctx.backend.getStep(id, key);
  span?.setAttributes({
    [STEP_KEY]: key,
    [TelemetryAttributes.JobId]: id,
    [STEP_STORED]: stored?.ok === true,
  });
  if (stored?.ok) return stored.result as T;
  const started = Date.now();
  let value: T;
  try {
    value = await fn();
  } catch (err) {
    const failure = { ok: false as const, error: toError(err).message, durationMs: Date.now() - started, at: Date.now() };
    // Recorded for the dashboard only; the step runs again next attempt. Never hide fn's error.
    await job.ctx.backend.recordStep(id, key, failure, job.fence).catch(() => undefined);
    throw err;
  }
  const json = value === undefined ? 'null' : serialize(value, `The result of step "${key}"`);
  const result = await job.ctx.backend.recordStep(id, key, { ok: true, json, durationMs: Date.now() - started, at: Date.now() }, job.fence);
  throwOnWriteCode(job, result.code, `record step "${key}" of`);
  // A success stored first (by an earlier attempt whose reply was lost) wins.
  if (!result.stored?.ok) throw new Error(`Step "${key}" of job ${id}: the stored step is not a success.`);
  return result.stored.result as T;
}

/** `job.getSteps()`: see the Job method. */
export async function listSteps(job: Job): Promise<StepInfo[]> {
  const id = job.requireId();
  await job.ctx.ready();
  const steps = await job.ctx.backend.getSteps(id);
  return Object.entries(steps).map(([key, step]) =>
    step.ok
      ? { key, result: step.result, durationMs: step.durationMs, at: step.at }
      : { key, error: step.error, durationMs: step.durationMs, at: step.at },
  );
}

/** `job.continueWith(data, opts)`: see the Job method. */
export async function continueLoop(
  job: Job,
  data: unknown,
  opts: JobsOptions & { name?: string; maxTurns?: number; maxCost?: number },
): Promise<string> {
  const id = job.requireId();
  // maxTurns NaN or 'x' would silently remove the runaway-loop guard: refused with the rest.
  validateContinueOptions(opts);
  await job.ctx.ready();
  const { loopId, turn } = await turnOf(job, id);
  const nextId = `${loopId}:${turn + 1}`;
  const { name, maxTurns, maxCost, ...rest } = opts;
  if (maxTurns !== undefined && turn + 1 > maxTurns) {
    throw new UnrecoverableError(`Loop "${loopId}" reached maxTurns (${maxTurns}): turn ${turn + 1} was not added.`);
  }
  if (rest.deduplication !== undefined) {
    throw new InvalidOptionsError(
      'continueWith: deduplication does not apply to a turn (its id is already deterministic): remove the option.',
    );
  }
  // An occurrence's schedule fields (repeat, repeatJobKey, prevMillis) are not the next turn's.
  const { jobId: _jobId, delay: _delay, repeat: _repeat, repeatJobKey: _key, prevMillis: _prev, ...inherited } = job.opts;
  checkDeadLetterRoute(job.ctx.backend, (rest.deadLetter ?? inherited.deadLetter)?.queue);
  const next = toNewJob(name ?? job.name, data, { ...inherited, ...rest, jobId: nextId });
  const result = await job.ctx.backend.continueJob(id, job.fence, '__continue', next, job.ctx.clock.backendNow(), { id: loopId, maxCost });
  if (result.code === WriteCode.RefusedCancelled) {
    throw new CancelledError(`Run "${loopId}" was cancelled (${result.detail}): turn ${turn + 1} was not added.`);
  }
  if (result.code === WriteCode.OverBudget) {
    throw new UnrecoverableError(
      `Run "${loopId}" has cost ${result.detail}, reaching its maxCost (${maxCost}): turn ${turn + 1} was not added.`,
    );
  }
  if (result.code === WriteCode.IdTaken) {
    throw new InvalidStateError(
      `continueWith of job ${id}: turn ${turn + 1} of run "${loopId}" would be job "${nextId}", but another job (not a turn of this run) has that id: nothing was added. Give the run's first turn an id no other job's id starts with.`,
    );
  }
  throwOnWriteCode(job, result.code, 'continue');
  if (result.nextId === undefined) throw new Error(`continueWith of job ${id}: the stored continue step names no next turn.`);
  return result.nextId;
}

/**
 * The run (loop) job `id` belongs to and its turn, from its record: a turn `continueWith` added
 * records its run (its id is then `<runId>:<n>`, turn n). Any other job is turn 0 of a run: of the
 * id without its `:0` when it ends so (the documented `${runId}:0`), else of its own id (`conv:42`
 * is run `conv:42`, never turn 42 of `conv`).
 */
export async function turnOf(job: Job, id: string): Promise<{ loopId: string; turn: number }> {
  const recorded = await job.ctx.backend.runOf(id);
  if (recorded !== undefined && id.startsWith(`${recorded}:`)) {
    const turn = Number(id.slice(recorded.length + 1));
    if (Number.isSafeInteger(turn) && turn >= 0) return { loopId: recorded, turn };
  }
  return firstTurnOf(id);
}

/** A run's first turn: `<runId>:0` is run `<runId>`, any other id the run of that id. */
export function firstTurnOf(id: string): { loopId: string; turn: 0 } {
  return { loopId: id.length > 2 && id.endsWith(':0') ? id.slice(0, -2) : id, turn: 0 };
}

/** `job.reportCost(cost)`: see the Job method. */
export async function reportJobCost(job: Job, cost: number): Promise<number | undefined> {
  const id = job.requireId();
  if (!(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0)) {
    throw new InvalidDataError(`job.reportCost takes a finite number >= 0 (tokens, cents: any unit), got ${String(cost)}.`);
  }
  await job.ctx.ready();
  const result = await job.ctx.backend.reportCost(id, (await turnOf(job, id)).loopId, cost, job.fence);
  throwOnWriteCode(job, result.code, 'report the cost of');
  return result.runCost;
}
