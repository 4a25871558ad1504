/**
 * The job options' one description (BullMQ's names and meanings, and Hopper's own), checked on
 * every add (queue.add, addBulk, flows, defaultJobOptions, scheduler templates, continueWith) and
 * on the methods that change one option (changeDelay, changePriority).
 */
import { InvalidOptionsError } from '../job/errors.js';
import { UNSUPPORTED_OPTIONS } from '../job/compat.js';
import {
  anyOf,
  bool,
  custom,
  duration,
  finite,
  int,
  isObject,
  object,
  positiveInt,
  refuse,
  showValue,
  str,
  unsupported,
  validate,
  type ObjectSpec,
  type Spec,
} from './kit.js';
import type { JobsOptions } from '../job/options.js';
import { checkPriority, validateGroupId, validateJobId, validateQueueName } from './names.js';

/** Longest delay (job `delay`, backoff delays, deduplication `ttl`): 100 years in ms. */
export const MAX_DELAY_MS = 100 * 365 * 86_400_000;
/** Most finished jobs a retention count keeps: 2^31 - 1. */
export const MAX_RETENTION_COUNT = 2 ** 31 - 1;
/** Longest retention age: 100 years, in seconds. */
export const MAX_RETENTION_AGE_S = 100 * 365 * 86_400;
/** Largest `cost` of a job (any unit): 10^15. */
export const MAX_COST = 1e15;

/** The child failure options, at most one of which a job may set. */
export const CHILD_FAILURE_OPTIONS = [
  'failParentOnFailure',
  'continueParentOnFailure',
  'ignoreDependencyOnFailure',
  'removeDependencyOnFailure',
] as const;

/** The refused BullMQ options of `owner` (job/compat.ts), as specs. */
export function unsupportedFields(owner: keyof typeof UNSUPPORTED_OPTIONS, place: string): Record<string, Spec> {
  const out: Record<string, Spec> = {};
  for (const [key, refusal] of Object.entries(UNSUPPORTED_OPTIONS[owner])) {
    out[key] = unsupported(owner, key, `${key} (${place} in BullMQ) is not supported by Hopper. ${refusal.hint}`, refusal.allows);
  }
  return out;
}

/** A retention age in seconds with at most millisecond precision (it is stored in ms). */
const retentionAge: Spec = custom(
  `a number of seconds from 0 to ${MAX_RETENTION_AGE_S} (100 years), in steps of at least 0.001`,
  (value, path) => {
    const ms = typeof value === 'number' ? value * 1000 : NaN;
    if (!(typeof value === 'number' && value >= 0 && value <= MAX_RETENTION_AGE_S && Math.abs(ms - Math.round(ms)) < 1e-6)) {
      throw refuse(
        path,
        value,
        retentionAge.accepted,
        typeof value === 'number' && value > 0 && value < 0.001 ? 'the age is in seconds, not ms' : undefined,
      );
    }
  },
);

const retentionCount = int(0, MAX_RETENTION_COUNT);

/** BullMQ's retention option: true (remove), false (keep), a count, or { age (s), count }. */
export function retentionSpec(): Spec {
  const keepObject = object(
    { count: retentionCount, age: retentionAge, limit: positiveInt(MAX_RETENTION_COUNT) },
    {
      what: '{ count } or { age (seconds), count? }',
      refine(value, path) {
        if (value.count === undefined && value.age === undefined)
          throw refuse(path, value, '{ count } or { age (seconds), count? }', 'give count, age or both');
      },
    },
  );
  return anyOf(
    [bool, retentionCount, keepObject],
    `true (remove at once), false (keep), a count (an integer from 0 to ${MAX_RETENTION_COUNT}), or { count?, age? (seconds, at most ${MAX_RETENTION_AGE_S}) }`,
  );
}

/** A delay in ms (stored as a due time, so longer than a timer allows): a finite number from 0 to 100 years. */
export const delayMs = finite(0, MAX_DELAY_MS, 'ms, at most 100 years');

const BUILTIN_BACKOFF = new Set(['fixed', 'exponential', 'custom']);

/** The backoff option; `customTypes` are the Queue's `backoffTypes`. */
function backoffSpec(customTypes: () => readonly string[]): Spec {
  const fields = object(
    {
      type: str(),
      delay: delayMs,
      jitter: custom('a number from 0 to 1', (value, path) => {
        if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
          throw new InvalidOptionsError(`Jitter should be between 0 and 1: ${path} must be a number from 0 to 1, got ${showValue(value)}.`);
        }
      }),
    },
    { what: "{ type: 'fixed' | 'exponential' | '<custom>', delay?, jitter? }" },
  );
  const accepted = `a delay in ms (a finite number from 0 to ${MAX_DELAY_MS}) or { type: 'fixed' | 'exponential' | '<custom>', delay, jitter }`;
  return custom(accepted, (value, path) => {
    if (typeof value === 'number') return delayMs.check(value, path);
    if (!isObject(value) || typeof value.type !== 'string' || value.type === '') throw refuse(path, value, accepted);
    fields.check(value, path);
    if (!BUILTIN_BACKOFF.has(value.type) && !customTypes().includes(value.type)) {
      throw new InvalidOptionsError(
        `Unknown backoff type "${value.type}": use 'fixed', 'exponential' or 'custom' (handled by the worker's settings.backoffStrategy), ` +
          `or declare it in the Queue's backoffTypes option.`,
      );
    }
  });
}

const DEDUP_SHAPE = '{ id: non-empty string, ttl?, extend?, replace?, keepLastIfActive? }';

const deduplicationSpec: Spec = (() => {
  const fields = object(
    {
      id: str(1, 1024),
      ttl: int(0, MAX_DELAY_MS),
      extend: bool,
      replace: bool,
      keepLastIfActive: bool,
      ...unsupportedFields('deduplication', 'a deduplication option'),
    },
    {
      what: DEDUP_SHAPE,
      refine(value, path) {
        if (value.extend && !value.ttl) throw new InvalidOptionsError(`${path}.extend needs a ttl to extend: add ttl (ms).`);
      },
    },
  );
  return custom(DEDUP_SHAPE, (value, path) => {
    // BullMQ's key phrase first, for code that matches it.
    if (isObject(value) && (value.id === undefined || value.id === '')) {
      throw new InvalidOptionsError(`Deduplication id must be provided: ${path}.id must be a non-empty string, got ${showValue(value)}.`);
    }
    if (!isObject(value) || typeof value.id !== 'string') {
      throw new InvalidOptionsError(`Deduplication id must be provided: ${path} must be ${DEDUP_SHAPE}, got ${showValue(value)}.`);
    }
    fields.check(value, path);
  });
})();

const queueNameSpec = custom('a queue name', (value) => validateQueueName(value));

const groupSpec = object(
  {
    id: custom('a group id: a non-empty string of at most 256 characters', (v) => validateGroupId(v)),
    maxSize: positiveInt(MAX_RETENTION_COUNT),
  },
  {
    what: '{ id: string, maxSize? }',
    refine(value) {
      if (value.id === undefined) validateGroupId(value.id);
    },
  },
);

const parentSpec = object(
  { id: str(1, 1024), queue: str(1, 512) },
  {
    what: "{ id: '<parent job id>', queue: '<prefix>:<parent queue>' } (the parent's job.queueQualifiedName)",
    refine(value, path) {
      if (value.id === undefined || value.queue === undefined) {
        throw refuse(path, value, "{ id: '<parent job id>', queue: '<prefix>:<parent queue>' } (the parent's job.queueQualifiedName)");
      }
    },
  },
);

const REPEAT_REFUSED =
  'repeat is honoured by queue.add only (a legacy repeatable job), not by addBulk, flows, defaultJobOptions or scheduler templates: ' +
  'add it with queue.add(name, data, { repeat }) or use queue.upsertJobScheduler(id, repeat, template).';

/** The fields of a job's options, `customTypes` giving the backoff types the queue declared. */
function jobFields(customTypes: () => readonly string[]): Record<string, Spec> {
  return {
    jobId: custom('a custom job id', (v) => validateJobId(v)),
    delay: delayMs,
    priority: custom('an integer from 0 to 2097151', (v) => checkPriority(v)),
    lifo: bool,
    attempts: int(0, MAX_RETENTION_COUNT),
    backoff: backoffSpec(customTypes),
    removeOnComplete: retentionSpec(),
    removeOnFail: retentionSpec(),
    timestamp: finite(0, Number.MAX_SAFE_INTEGER, 'epoch ms'),
    keepLogs: int(0, MAX_RETENTION_COUNT),
    stackTraceLimit: int(0, 1000),
    sizeLimit: int(0),
    deduplication: deduplicationSpec,
    deadLetter: object({ queue: queueNameSpec }, { what: "{ queue: 'name' }", refine: (v) => validateQueueName(v.queue) }),
    timeout: duration(1),
    parent: parentSpec,
    failParentOnFailure: bool,
    continueParentOnFailure: bool,
    ignoreDependencyOnFailure: bool,
    removeDependencyOnFailure: bool,
    group: groupSpec,
    repeat: custom('nothing here (queue.add only)', () => {
      throw new InvalidOptionsError(REPEAT_REFUSED);
    }),
    repeatJobKey: str(0, 1024),
    prevMillis: finite(0, Number.MAX_SAFE_INTEGER, 'epoch ms'),
    telemetry: object({ metadata: str(0), omitContext: bool }, { what: '{ metadata?: string, omitContext?: boolean }' }),
    cost: finite(0, MAX_COST),
    ...unsupportedFields('job', 'a job option'),
  };
}

/** Rules across a job's options: one child failure policy; no deduplication on a child. */
function refineJob(o: Record<string, unknown>): void {
  let set: string[] | undefined;
  for (const name of CHILD_FAILURE_OPTIONS) if (o[name] === true) (set ??= []).push(name);
  if (set !== undefined && set.length > 1) {
    // BullMQ's key phrase (its order of the names) first, for code that matches it.
    const order = ['removeDependencyOnFailure', 'failParentOnFailure', 'continueParentOnFailure', 'ignoreDependencyOnFailure'];
    const listed = [...set].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    throw new InvalidOptionsError(
      `The following options cannot be used together: ${listed.join(', ')}. A child can follow one failure policy, but ${set.join(' and ')} are both set: keep one.`,
    );
  }
  if (o.parent !== undefined && o.deduplication) {
    throw new InvalidOptionsError(
      'Deduplication and parent options cannot be used together: a child job (with parent) cannot use deduplication; give it a jobId instead, which makes re-adds idempotent.',
    );
  }
}

let currentTypes: readonly string[] = [];
const JOB_OPTIONS: ObjectSpec = object(
  jobFields(() => currentTypes),
  {
    what: 'an object of job options ({ jobId, delay, attempts, backoff, ... })',
    refine: refineJob,
  },
);

/** The job options' description (its fields, for docs and the fuzzer). */
export const JOB_OPTIONS_SPEC: ObjectSpec = JOB_OPTIONS;

/** The extra options of `job.continueWith` (besides job options). */
const CONTINUE_FIELDS: Record<string, Spec> = {
  name: str(0),
  maxTurns: positiveInt(MAX_RETENTION_COUNT),
  maxCost: finite(0, MAX_COST),
};

const CONTINUE_OPTIONS: ObjectSpec = object(
  { ...jobFields(() => currentTypes), ...CONTINUE_FIELDS },
  {
    what: 'job options with name?, maxTurns?, maxCost?',
    refine: refineJob,
  },
);

/**
 * Checks every job option; throws {@link InvalidOptionsError} (or {@link InvalidJobIdError},
 * {@link UnsupportedOptionError}) on the first bad one, naming it, the value and what is accepted.
 * Unknown options are refused (a typo would otherwise change nothing). `customBackoffTypes` are
 * backoff type names accepted besides the built-in ones. `path` prefixes the option names in
 * messages (`defaultJobOptions`, `children[2].opts`).
 */
export function validateJobOptions(
  opts: unknown,
  customBackoffTypes: readonly string[] = [],
  path = '',
): asserts opts is JobsOptions | undefined {
  if (opts === undefined) return;
  if (!isObject(opts)) throw new InvalidOptionsError(`Job options must be an object, got ${showValue(opts)}.`);
  currentTypes = customBackoffTypes;
  try {
    validate(JOB_OPTIONS, opts, path);
  } finally {
    currentTypes = [];
  }
}

/** Checks `job.continueWith`'s options: job options, plus `name`, `maxTurns` and `maxCost`. */
export function validateContinueOptions(opts: unknown): void {
  if (opts === undefined) return;
  if (!isObject(opts)) throw refuse('continueWith(opts)', opts, CONTINUE_OPTIONS.accepted);
  validate(CONTINUE_OPTIONS, opts, 'continueWith');
}
