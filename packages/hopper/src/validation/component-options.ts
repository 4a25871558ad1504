/**
 * The options of Queue, Worker, QueueEvents and FlowProducer, each set described once and checked
 * by the component's constructor before any connection is opened (QueueBase validates, then
 * creates the backend), so a refused option leaves nothing running.
 */
import { fileURLToPath } from 'node:url';
import { InvalidOptionsError } from '../job/errors.js';
import { validateTelemetry } from '../telemetry/trace.js';
import { validateConnection } from './connection.js';
import { retentionSpec, unsupportedFields, validateJobOptions, MAX_COST, MAX_DELAY_MS } from './job-options.js';
import {
  bool,
  custom,
  duration,
  finite,
  func,
  int,
  isObject,
  MAX_TIMER_MS,
  object,
  positiveInt,
  refuse,
  showValue,
  str,
  validate,
  type ObjectSpec,
  type Spec,
} from './kit.js';
import { validatePrefix, validateQueueName } from './names.js';

/** Largest worker concurrency. */
export const MAX_CONCURRENCY = 1_000_000;
/** Longest `drainDelay`, seconds (its wait is a timer: 2^31 - 1 ms). */
export const MAX_DRAIN_DELAY_S = Math.floor(MAX_TIMER_MS / 1000);

/**
 * The components whose options are described here. `QueueBase`: a class of the user's own that
 * extends QueueBase (as BullMQ allows): the base options are checked, its own are its business.
 */
export type Component = 'Queue' | 'Worker' | 'QueueEvents' | 'FlowProducer' | 'QueueBase';

const clockSpec = custom('a Clock ({ real, backendNow(), now(), setTimeout() }: SystemClock or FakeClock)', (value, path) => {
  const c = value as Record<string, unknown>;
  if (!isObject(value) || typeof c.now !== 'function' || typeof c.backendNow !== 'function' || typeof c.setTimeout !== 'function') {
    throw refuse(path, value, 'a Clock ({ real, backendNow(), now(), setTimeout() }: SystemClock or FakeClock)');
  }
});

// A component's options (Queue, Worker, QueueEvents, FlowProducer: `typosOnly`): a name it does
// not know is refused when it is close to one it knows (a typo: "did you mean"), and otherwise left
// alone, as BullMQ leaves it: libraries built on BullMQ pass one options object holding settings of
// their own too (bullmq-extra's Router gives its `optsOverride` to a Worker). Left alone, never
// silently: a HopperWarning names it, once per component and name. Job options stay strict: every
// unknown name is refused.
const warned = new Set<string>();
function ignoredBy(component: string): (key: string) => void {
  return (key) => {
    if (warned.has(`${component}.${key}`)) return;
    warned.add(`${component}.${key}`);
    process.emitWarning(
      `${component} option '${key}' is not one Hopper knows: it is ignored (as BullMQ ignores it). If it is meant as one of Hopper's, check its name in docs/api.md.`,
      { type: 'HopperWarning', code: 'HOPPER_UNKNOWN_OPTION' },
    );
  };
}

/** Options every component takes (QueueBaseOptions). */
const BASE_FIELDS: Record<string, Spec> = {
  connection: custom('a connection: a redis:// or rediss:// URL, a sqlite: URL, ioredis options or an ioredis client', (v, p) =>
    validateConnection(v, p),
  ),
  prefix: custom('a key prefix', (v) => validatePrefix(v)),
  clock: clockSpec,
  skipVersionCheck: bool,
  skipWaitingForReady: bool,
  blockingConnection: bool,
};

const telemetrySpec = (owner: string): Spec =>
  custom('a telemetry adapter ({ tracer, contextManager, meter? })', (v) => validateTelemetry(v, owner));

/** A rate limiter: `{ max, duration }` (positive integers), `weight: 'cost'` where weighted limits exist. */
export function limiterSpec(weighted: boolean): ObjectSpec {
  const what = weighted ? "{ max, duration, weight?: 'cost' }" : '{ max, duration }';
  return object(
    {
      max: positiveInt(MAX_COST),
      duration: duration(1),
      weight: custom("'cost'", (value, path) => {
        if (!weighted) {
          throw new InvalidOptionsError(
            `${path}: weighted rate limits are not supported here; remove weight, or put a weighted limiter on the worker or the queue.`,
          );
        }
        if (typeof value === 'function') {
          throw new InvalidOptionsError(
            `${path} must be 'cost', not a function: the limit is counted inside Redis, which cannot call it. ` +
              `Compute the weight when adding the job: queue.add(name, data, { cost: job.data.estimatedTokens }), and set weight: 'cost'.`,
          );
        }
        if (value !== 'cost')
          throw new InvalidOptionsError(`${path} must be 'cost' (each job weighs its cost option), got ${showValue(value)}.`);
      }),
    },
    {
      what,
      refine(value, path) {
        if (value.max === undefined || value.duration === undefined) throw refuse(path, value, `${what} (jobs per ms)`);
      },
    },
  );
}

const budgetSpec = object(
  { key: func, limit: finite(Number.MIN_VALUE, MAX_COST), window: duration(1) },
  {
    what: '{ key: (data) => tenant, limit, window }',
    refine(value, path) {
      for (const name of ['key', 'limit', 'window'])
        if (value[name] === undefined) throw refuse(`${path}.${name}`, undefined, budgetSpec.fields.get(name)?.accepted ?? '');
    },
  },
);

let queueBackoffTypes: readonly string[] = [];

const QUEUE_OPTIONS: ObjectSpec = object(
  {
    ...BASE_FIELDS,
    defaultJobOptions: custom('job options', (v, p) => validateJobOptions(v, queueBackoffTypes, p)),
    streams: object({ events: object({ maxLen: int(0, 10_000_000) }, { what: '{ maxLen }' }) }, { what: '{ events: { maxLen } }' }),
    backoffTypes: custom('an array of backoff type names (non-empty strings)', (value, path) => {
      if (!Array.isArray(value) || value.some((t) => typeof t !== 'string' || t === '')) {
        throw refuse(path, value, 'an array of backoff type names (non-empty strings)');
      }
    }),
    deadLetter: object(
      { queue: custom('a queue name', (v) => validateQueueName(v)) },
      { what: "{ queue: 'name' }", refine: (v) => validateQueueName(v.queue) },
    ),
    failParentOnChildFailure: bool,
    telemetry: telemetrySpec('Queue'),
    budget: budgetSpec,
    ...unsupportedFields('Queue', 'a Queue option'),
  },
  { what: 'Queue options ({ connection, prefix, defaultJobOptions, ... })', typosOnly: ignoredBy('Queue') },
);

/** A positive integer of ms, refused with BullMQ's phrase ('<name> must be greater than 0'). */
function positiveMs(max = MAX_TIMER_MS): Spec {
  return custom(`a positive integer of ms, at most ${max}`, (value, path) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new InvalidOptionsError(`${path} must be greater than 0: a positive integer of ms, got ${String(value)}.`);
    }
    if (!Number.isInteger(value) || value > max)
      throw refuse(path, value, `a positive integer of ms, at most ${max} (2^31 - 1, about 24.8 days)`);
  });
}

const WORKER_OPTIONS: ObjectSpec = object(
  {
    ...BASE_FIELDS,
    concurrency: custom(`an integer from 1 to ${MAX_CONCURRENCY}`, (value, path) => {
      // BullMQ's key phrase first.
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
        // BullMQ's exact message (code matches it whole); the fields say the rest.
        const err = new InvalidOptionsError('concurrency must be a finite number greater than 0');
        err.option = path;
        err.value = value;
        err.accepted = `an integer from 1 to ${MAX_CONCURRENCY}`;
        throw err;
      }
      if (!Number.isInteger(value) || value > MAX_CONCURRENCY) throw refuse(path, value, `an integer from 1 to ${MAX_CONCURRENCY}`);
    }),
    prefetch: custom(`an integer from 0 to ${MAX_CONCURRENCY}`, (value, path) => {
      if (!(typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_CONCURRENCY)) {
        throw refuse(
          path,
          value,
          `an integer from 0 to ${MAX_CONCURRENCY}`,
          'the number of jobs the worker may hold beyond its free slots; 0 turns it off',
        );
      }
    }),
    autorun: bool,
    lockDuration: positiveMs(),
    lockRenewTime: positiveMs(),
    stalledInterval: positiveMs(),
    maxStalledCount: custom('an integer >= 0', (value, path) => {
      if (!(typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 1_000_000)) {
        throw new InvalidOptionsError(
          `maxStalledCount must be greater or equal than 0: ${path} must be an integer from 0 to 1000000, got ${String(value)}.`,
        );
      }
    }),
    maxStartedAttempts: custom('an integer >= 0', (value, path) => {
      if (!(typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER)) {
        throw new InvalidOptionsError(
          `maxStartedAttempts must be greater or equal than 0: ${path} must be an integer, got ${String(value)}.`,
        );
      }
    }),
    skipStalledCheck: bool,
    removeOnComplete: retentionSpec(),
    removeOnFail: retentionSpec(),
    drainDelay: custom(`a number of seconds greater than 0, at most ${MAX_DRAIN_DELAY_S}`, (value, path) => {
      if (!(typeof value === 'number' && value > 0 && value <= MAX_DRAIN_DELAY_S)) {
        throw new InvalidOptionsError(
          `drainDelay must be greater than 0: ${path} must be a number of seconds greater than 0, at most ${MAX_DRAIN_DELAY_S} (its wait is a timer: 2^31 - 1 ms), got ${String(value)}.`,
        );
      }
    }),
    closeTimeout: positiveMs(),
    schedulerInterval: positiveMs(),
    timeoutGrace: duration(0),
    useWorkerThreads: bool,
    sandbox: object(
      {
        minChildren: int(0, MAX_CONCURRENCY),
        idleTimeoutMs: duration(0),
        killGraceMs: duration(0),
        loadRetryMs: duration(0),
        maxMemoryMb: positiveInt(1_000_000),
      },
      { what: '{ minChildren?, idleTimeoutMs?, killGraceMs?, loadRetryMs?, maxMemoryMb? }' },
    ),
    limiter: limiterSpec(true),
    maximumRateLimitDelay: positiveMs(),
    name: str(0, 1024),
    eventsMaxAge: int(0, MAX_DELAY_MS, 'ms'),
    settings: object(
      { backoffStrategy: func, ...unsupportedFields('settings', 'a worker settings option') },
      { what: '{ backoffStrategy?: (attemptsMade, type, err, job) => ms }' },
    ),
    telemetry: telemetrySpec('Worker'),
    metrics: object({ maxDataPoints: positiveInt(10_000_000) }, { what: '{ maxDataPoints?: positive integer (minutes) }' }),
    latencyMetrics: bool,
    ...unsupportedFields('Worker', 'a Worker option'),
  },
  {
    what: 'Worker options ({ connection, concurrency, lockDuration, ... })',
    typosOnly: ignoredBy('Worker'),
    refine(o) {
      const sandbox = o.sandbox as { minChildren?: number } | undefined;
      const concurrency = (o.concurrency as number | undefined) ?? 1;
      if (sandbox?.minChildren !== undefined && sandbox.minChildren > concurrency) {
        throw InvalidOptionsError.of('sandbox.minChildren', sandbox.minChildren, `at most concurrency (${concurrency})`);
      }
      const lockDuration = (o.lockDuration as number | undefined) ?? 30_000;
      const renew = o.lockRenewTime as number | undefined;
      if (renew !== undefined && renew >= lockDuration) {
        throw InvalidOptionsError.of(
          'lockRenewTime',
          renew,
          `less than lockDuration (${lockDuration} ms)`,
          'a lock renewed after it expired lets every job be rescued as stalled while it runs; leave lockRenewTime out (lockDuration / 2) or lower it',
        );
      }
    },
  },
);

const QUEUE_EVENTS_OPTIONS: ObjectSpec = object(
  {
    ...BASE_FIELDS,
    autorun: bool,
    lastEventId: custom("a stream id: '$' (new events only), '0' (all kept events) or '<ms>-<seq>'", (value, path) => {
      if (typeof value !== 'string' || !/^(\$|\d{1,20}(-\d{1,20})?)$/.test(value)) {
        throw refuse(path, value, "a stream id: '$' (new events only), '0' (all kept events) or '<ms>-<seq>'");
      }
    }),
    blockingTimeout: duration(1),
    ...unsupportedFields('QueueEvents', 'a QueueEvents option'),
  },
  { what: 'QueueEvents options ({ connection, prefix, autorun, lastEventId, blockingTimeout })', typosOnly: ignoredBy('QueueEvents') },
);

const FLOW_PRODUCER_OPTIONS: ObjectSpec = object(
  {
    ...BASE_FIELDS,
    name: str(),
    telemetry: telemetrySpec('FlowProducer'),
    ...unsupportedFields('FlowProducer', 'a FlowProducer option'),
  },
  { what: 'FlowProducer options ({ connection, prefix, name, telemetry })', typosOnly: ignoredBy('FlowProducer') },
);

const QUEUE_BASE_OPTIONS: ObjectSpec = object(BASE_FIELDS, {
  open: true,
  what: "QueueBase options ({ connection, prefix, ... } and the subclass's own)",
});

const SPECS: Record<Component, ObjectSpec> = {
  QueueBase: QUEUE_BASE_OPTIONS,
  Queue: QUEUE_OPTIONS,
  Worker: WORKER_OPTIONS,
  QueueEvents: QUEUE_EVENTS_OPTIONS,
  FlowProducer: FLOW_PRODUCER_OPTIONS,
};

/** The option sets' descriptions (for docs and the fuzzer). */
export const COMPONENT_OPTION_SPECS: Readonly<Record<Component, ObjectSpec>> = SPECS;

/**
 * Checks a component's constructor options (and queue name, when it has one) before anything is
 * opened: an InvalidOptionsError, InvalidNameError or UnsupportedOptionError names what is wrong.
 */
export function validateComponentOptions(component: Component, name: string | undefined, opts: unknown): void {
  if (name !== undefined || component !== 'FlowProducer') validateQueueName(name);
  if (opts === undefined) return;
  if (!isObject(opts)) throw refuse(`${component} options`, opts, SPECS[component].accepted);
  queueBackoffTypes = component === 'Queue' && Array.isArray(opts.backoffTypes) ? (opts.backoffTypes as string[]) : [];
  try {
    validate(SPECS[component], opts, '');
  } finally {
    queueBackoffTypes = [];
  }
}

/** Checks one Worker option changed after construction (`worker.concurrency = n`). */
export function checkWorkerOption(option: 'concurrency', value: unknown): void {
  const spec = WORKER_OPTIONS.fields.get(option);
  if (value === undefined) throw refuse(option, value, spec?.accepted ?? '');
  if (spec) validate(spec, value, option);
}

/**
 * A worker's `prefetch` needs jobs started by the worker: refused (before anything is opened) for
 * a manual worker (no processor), whose getNextJob takes one job per call.
 */
export function validatePrefetch(processor: unknown, opts: unknown): void {
  if (processor !== undefined && processor !== null) return;
  const prefetch = isObject(opts) ? opts.prefetch : undefined;
  if (prefetch === undefined || prefetch === 0) return;
  throw InvalidOptionsError.of(
    'prefetch',
    prefetch,
    '0 for a worker with no processor',
    'a manual worker (getNextJob) takes one job per call and holds none ahead; pass a processor, or leave prefetch out',
  );
}

/** A worker's processor: a function, a processor file (path or file: URL), or null/undefined for manual processing. */
export function validateProcessor(processor: unknown): void {
  if (processor === undefined || processor === null || typeof processor === 'function') return;
  const file = processor instanceof URL ? processor.href : processor;
  if (typeof file === 'string' && file !== '' && !file.includes('\0')) {
    // A file: URL must be one fileURLToPath reads (checked now, not after connecting).
    if (!file.startsWith('file:')) {
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(file)) return;
    } else {
      try {
        fileURLToPath(file);
        return;
      } catch {
        // refused below
      }
    }
  }
  throw refuse(
    'new Worker(name, processor)',
    processor,
    'a function (job, token, signal) => result, the path or file: URL of a processor file, or null for manual processing',
  );
}
