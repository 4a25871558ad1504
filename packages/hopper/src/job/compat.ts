/**
 * No silent acceptance: the BullMQ options Hopper honours, and the ones it does not implement,
 * each refused with an {@link UnsupportedOptionError} that names it and says what to use instead.
 * A migrating app then learns at construction (or at add) that an option would change nothing,
 * instead of finding out when a nightly job never runs again.
 *
 * The two tables are data: a test walks BullMQ's own option types and checks that every option
 * is in one of them (and that each refused one is refused). When Hopper implements an option,
 * move it from UNSUPPORTED_OPTIONS to IMPLEMENTED_OPTIONS.
 */
import { UnsupportedOptionError } from './errors.js';

/** The option objects checked: the components' constructor options, job options and their parts. */
export type OptionsOwner = 'Queue' | 'Worker' | 'QueueEvents' | 'FlowProducer' | 'job' | 'deduplication' | 'settings';

/** Why an option is refused, and which of its values are harmless (they ask for BullMQ's default, which Hopper does). */
interface Refusal {
  /** What to do instead. */
  readonly hint: string;
  /** Values accepted anyway because they ask for nothing Hopper lacks. Default: none (only leaving it out). */
  readonly allows?: readonly unknown[];
}

const REPEAT_HINT =
  'Hopper schedules repeating jobs with job schedulers: queue.upsertJobScheduler(id, { pattern | every, tz, ... }, { name, data, opts }) ' +
  '(idempotent, with DST, overlap and catch-up policies; docs/schedules.md).';

/**
 * BullMQ options (by owner) that Hopper does not implement. Passing any of them with a value that
 * asks for something (anything but `undefined` and the values listed in `allows`) throws.
 */
export const UNSUPPORTED_OPTIONS: Readonly<Record<OptionsOwner, Readonly<Record<string, Refusal>>>> = {
  Queue: {
    skipMetasUpdate: {
      hint: 'A Hopper Queue records its settings (events cap, epoch) once at start and has no read-only mode: remove the option.',
      allows: [false],
    },
    settings: { hint: `Custom repeat strategies are not supported. ${REPEAT_HINT}` },
  },
  Worker: {
    skipLockRenewal: {
      hint: 'Hopper renews the locks of the jobs a processor runs; for long jobs raise lockDuration, for manual processing (getNextJob) call job.extendLock(token, ms).',
      allows: [false],
    },
    runRetryDelay: {
      hint: 'A Hopper worker retries after a Redis error on its own schedule (reconnects are waited out): remove the option.',
    },
    workerForkOptions: {
      hint: "Sandboxed processors are configured with the worker's sandbox option ({ minChildren, idleTimeoutMs, killGraceMs, maxMemoryMb }).",
    },
    workerThreadsOptions: {
      hint: "Sandboxed processors are configured with useWorkerThreads and the worker's sandbox option ({ minChildren, idleTimeoutMs, killGraceMs, maxMemoryMb }).",
    },
  },
  QueueEvents: {},
  FlowProducer: {},
  job: {
    // Removed from BullMQ's types in v6; BullMQ refuses it with this message at add.
    debounce: { hint: 'Debounce option has been removed. Use deduplication option instead (same fields: id, ttl, extend, replace).' },
  },
  deduplication: {
    reschedule: {
      hint: 'To restart the delay of a deduplicated delayed job, use replace: true (debounce: the last add wins), with extend for the ttl.',
      allows: [false],
    },
  },
  settings: {
    repeatStrategy: { hint: `Custom repeat strategies are not supported. ${REPEAT_HINT}` },
    repeatKeyHashAlgorithm: {
      hint: `Hopper does not hash repeat keys: a legacy repeatable job's scheduler id is repeat.key or name:jobId:endDate:tz:pattern|every. ${REPEAT_HINT}`,
    },
  },
};

/**
 * BullMQ options (by owner) that Hopper honours, with BullMQ's meaning (differences are documented
 * in docs/compatibility.md). Connection knobs Hopper does not need are honoured by doing what they
 * protect: `skipVersionCheck` (Hopper checks the server once at start and needs Redis 7+),
 * `skipWaitingForReady` and `blockingConnection` (Hopper opens the connections each role needs).
 */
export const IMPLEMENTED_OPTIONS: Readonly<Record<OptionsOwner, readonly string[]>> = {
  Queue: [
    'connection',
    'prefix',
    'defaultJobOptions',
    'streams',
    'telemetry',
    'skipVersionCheck',
    'skipWaitingForReady',
    'blockingConnection',
  ],
  Worker: [
    'connection',
    'prefix',
    'name',
    'autorun',
    'concurrency',
    'limiter',
    'maximumRateLimitDelay',
    'metrics',
    'maxStalledCount',
    'maxStartedAttempts',
    'stalledInterval',
    'removeOnComplete',
    'removeOnFail',
    'skipStalledCheck',
    'drainDelay',
    'lockDuration',
    'lockRenewTime',
    'settings',
    'useWorkerThreads',
    'telemetry',
    'skipVersionCheck',
    'skipWaitingForReady',
    'blockingConnection',
  ],
  QueueEvents: [
    'connection',
    'prefix',
    'autorun',
    'lastEventId',
    'blockingTimeout',
    'skipVersionCheck',
    'skipWaitingForReady',
    'blockingConnection',
  ],
  FlowProducer: ['connection', 'prefix', 'telemetry', 'skipVersionCheck', 'skipWaitingForReady', 'blockingConnection'],
  job: [
    'jobId',
    'parent',
    'timestamp',
    'priority',
    'delay',
    'attempts',
    'backoff',
    'lifo',
    'removeOnComplete',
    'removeOnFail',
    'keepLogs',
    'stackTraceLimit',
    'sizeLimit',
    'deduplication',
    'failParentOnFailure',
    'continueParentOnFailure',
    'ignoreDependencyOnFailure',
    'removeDependencyOnFailure',
    'telemetry',
    'repeat',
    'repeatJobKey',
    'prevMillis',
  ],
  deduplication: ['id', 'ttl', 'extend', 'replace', 'keepLastIfActive'],
  settings: ['backoffStrategy'],
};

const REFUSED = Object.fromEntries(Object.entries(UNSUPPORTED_OPTIONS).map(([owner, table]) => [owner, Object.entries(table)])) as Record<
  OptionsOwner,
  [string, Refusal][]
>;

/** Where a refused option was passed, for the message. */
const PLACES: Record<OptionsOwner, string> = {
  Queue: 'a Queue option',
  Worker: 'a Worker option',
  QueueEvents: 'a QueueEvents option',
  FlowProducer: 'a FlowProducer option',
  job: 'a job option',
  deduplication: 'a deduplication option',
  settings: 'a worker settings option',
};

/**
 * Throws an {@link UnsupportedOptionError} for the first option of `opts` that Hopper does not
 * implement (with a value that asks for something). Other keys are left to the owner's validation.
 */
export function refuseUnsupported(owner: OptionsOwner, opts: unknown): void {
  if (typeof opts !== 'object' || opts === null) return;
  // A few lookups per call (the refused names), not a walk of the options: this runs on every add.
  for (const [key, refusal] of REFUSED[owner]) {
    const value = (opts as Record<string, unknown>)[key];
    if (value === undefined || refusal.allows?.includes(value)) continue;
    throw new UnsupportedOptionError(`${key} (${PLACES[owner]} in BullMQ) is not supported by Hopper. ${refusal.hint}`, owner, key);
  }
}
