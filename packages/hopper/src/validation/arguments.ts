/**
 * The arguments of the public methods (beyond job and component options): each option set and
 * argument kind described once here and checked before the method reads or writes anything. A
 * refusal is an InvalidOptionsError naming the argument (`retryJobs(opts).state`,
 * `extendLock(duration)`), the value and what is accepted.
 */
import { JOB_STATES } from '../job/states.js';
import { InvalidOptionsError } from '../job/errors.js';
import { limiterSpec } from './component-options.js';
import { validateJobOptions } from './job-options.js';
import {
  anything,
  bool,
  custom,
  duration,
  finite,
  int,
  isObject,
  object,
  oneOf,
  refuse,
  str,
  validate,
  type ObjectSpec,
  type Spec,
} from './kit.js';
import { checkPriority, validateJobName, validateQueueName } from './names.js';

/** Checks `value` against `spec`, naming it `path` in a refusal (`where(arg)`). */
export function checkArgument(spec: Spec, value: unknown, path: string): void {
  validate(spec, value, path);
}

/** Checks an options object argument that may be left out (`undefined`). */
function checkOptional(spec: ObjectSpec, value: unknown, path: string): void {
  if (value === undefined) return;
  validate(spec, value, path);
}

/** A duration a timer waits on (ms, 0 or more, at most 2^31 - 1): `waitUntilFinished(ttl)`, `worker.delay(ms)`. */
export const TIMER_MS = duration(0);

/** A positive duration a timer or lock lasts (ms, 1 to 2^31 - 1): `extendLock(duration)`, `rateLimit(ms)`. */
export const POSITIVE_MS = duration(1);

/** Checks a ms argument a timer waits on (0 to 2^31 - 1; `positive`: from 1). */
export function checkDurationArg(value: unknown, path: string, positive = false): void {
  validate(positive ? POSITIVE_MS : TIMER_MS, value, path);
}

/** A wait's time limit (`waitUntilFinished(ttl)`): a finite number of ms from 0 to 2^31 - 1. */
/** `waitUntilFinished`'s ttl: any finite duration (a timer past 2^31-1 ms is chained: clock/timers.ts). */
export const WAIT_TTL = finite(0, Number.MAX_SAFE_INTEGER, 'ms');

/** The states `getJobCounts`, `getJobs` and friends take: the job states and BullMQ's aliases. */
export const COUNT_TYPES: readonly string[] = [...JOB_STATES, 'wait', 'paused', 'repeat'];

/** Checks the state names given to `getJobCounts(...types)` and `getJobCountByTypes(...types)`. */
export function checkStateNames(types: readonly unknown[], where: string): void {
  for (const type of types) {
    if (typeof type !== 'string' || !COUNT_TYPES.includes(type)) {
      throw InvalidOptionsError.of(`${where}(types)`, type, `one of ${COUNT_TYPES.join(', ')}`);
    }
  }
}

/** The states a finished job is retried from. */
const RETRY_STATE = custom("'failed' or 'completed'", (value, path) => {
  if (value !== 'failed' && value !== 'completed') {
    throw refuse(
      path,
      value,
      "'failed' or 'completed'",
      value === 'active' ? 'an active job is running: retrying it would start it a second time' : undefined,
    );
  }
});

/** `queue.retryJobs(opts)`. */
export const RETRY_JOBS_OPTIONS = object(
  { state: RETRY_STATE, count: int(1, 10_000), timestamp: finite(0, Number.MAX_SAFE_INTEGER, 'epoch ms') },
  { what: "{ state?: 'failed' | 'completed', count?, timestamp? }" },
);

/** `job.retry(state, opts)`'s state. */
export function checkRetryState(state: unknown, where: string): void {
  validate(RETRY_STATE, state, where);
}

/** `job.retry(state, opts)`'s opts. */
export const RETRY_OPTIONS = object(
  { resetAttemptsMade: bool, resetAttemptsStarted: bool },
  { what: '{ resetAttemptsMade?, resetAttemptsStarted? }' },
);

/** `queue.promoteJobs(opts)`. */
export const PROMOTE_JOBS_OPTIONS = object({ count: int(1, 10_000) }, { what: '{ count? }' });

/** The options of `setGlobalRateLimit` and `setGroupRateLimit`. */
export const RATE_LIMIT_OPTIONS = object({ weighted: bool }, { what: '{ weighted?: boolean }' });

/** `job.changePriority(opts)`. */
export const CHANGE_PRIORITY_OPTIONS = object(
  { priority: custom('an integer from 0 to 2097151', (v) => checkPriority(v)), lifo: bool },
  { what: '{ priority?, lifo? }' },
);

/** A Redis stream entry id part: an unsigned 64-bit integer. */
const UINT64_MAX = 18446744073709551615n;

function isUint64(digits: string): boolean {
  return digits.length <= 20 && BigInt(digits) <= UINT64_MAX;
}

/** A stream entry id (`<ms>-<seq>`) Redis accepts: both parts unsigned 64-bit integers. */
export function isEntryId(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = /^(\d{1,20})-(\d{1,20})$/.exec(value);
  return match !== null && isUint64(match[1]) && isUint64(match[2]);
}

/** `queue.readStream(jobId, opts)`. */
export const READ_STREAM_OPTIONS = object(
  {
    from: custom("'start' or an entry id such as '1700000000000-0' (a chunk's id)", (value, path) => {
      if (value !== 'start' && !isEntryId(value)) {
        throw refuse(path, value, "'start' or an entry id such as '1700000000000-0' (a chunk's id, both parts below 2^64)");
      }
    }),
    follow: bool,
    attempts: oneOf(['latest', 'all']),
    pageSize: int(1, 1_000),
    signal: custom('an AbortSignal', (value, path) => {
      if (!(value instanceof AbortSignal)) throw refuse(path, value, 'an AbortSignal');
    }),
  },
  { what: "{ from?, follow?, attempts?: 'latest' | 'all', pageSize?: 1..1000, signal? }" },
);

/** `flowProducer.add(flow, opts)`'s opts: per-queue defaults. */
const FLOW_OPTS = custom('{ queuesOptions?: { [queueName]: { defaultJobOptions } } }', (value, path) => {
  if (!isObject(value)) throw refuse(path, value, '{ queuesOptions?: { [queueName]: { defaultJobOptions } } }');
  for (const key in value) {
    if (key !== 'queuesOptions') throw InvalidOptionsError.unknown(`${path}.${key}`, value[key], ['queuesOptions'], true);
  }
  const queues = value.queuesOptions;
  if (queues === undefined) return;
  if (!isObject(queues)) throw refuse(`${path}.queuesOptions`, queues, '{ [queueName]: { defaultJobOptions } }');
  for (const queue in queues) {
    validateQueueName(queue);
    QUEUE_DEFAULTS.check(queues[queue], `${path}.queuesOptions.${queue}`);
  }
});

const QUEUE_DEFAULTS = object(
  { defaultJobOptions: custom('job options', (v, p) => validateJobOptions(v, [], p)) },
  { what: '{ defaultJobOptions }' },
);

/** Checks `flowProducer.add(flow, opts)`'s opts. */
export function checkFlowOpts(opts: unknown): void {
  if (opts === undefined) return;
  validate(FLOW_OPTS, opts, 'add(flow, opts)');
}

/** A node of a flow as checkFlowIds walks it: its queue, its custom id if any, its children. */
export interface FlowIdNode {
  queue: string;
  opts: { jobId?: string; parent?: { id: string; queue: string } };
  children: FlowIdNode[];
}

/**
 * Refuses a flow in which two nodes would be one job: a child with its root's id (the root would
 * become its own parent), two nodes of one queue with one `jobId`, or a root whose `parent` is
 * itself. Checked before anything is written: without it the second node silently became the
 * first (a `duplicated` add), and a tree could wait on itself for ever.
 */
export function checkFlowIds(root: FlowIdNode, path = 'flow'): void {
  const seen = new Map<string, string>();
  const parent = root.opts.parent;
  if (parent && root.opts.jobId !== undefined && parent.id === root.opts.jobId && parent.queue.endsWith(`:${root.queue}`)) {
    throw refuse(`${path}.opts.parent`, parent, "a job other than the flow's root itself", `the root's jobId is "${root.opts.jobId}"`);
  }
  const visit = (node: FlowIdNode, at: string): void => {
    const id = node.opts.jobId;
    if (id !== undefined) {
      const key = `${node.queue}\u0000${id}`;
      const first = seen.get(key);
      if (first !== undefined) {
        throw refuse(
          `${at}.opts.jobId`,
          id,
          `an id no other node of the flow in queue "${node.queue}" has`,
          `${first} has it too: one job cannot be two nodes of a flow (a child with its root's id would make the root its own parent)`,
        );
      }
      seen.set(key, at);
    }
    node.children.forEach((child, i) => visit(child, `${at}.children[${i}]`));
  };
  visit(root, path);
}

/** A flow node's own fields (its `opts` and `children` are checked as the tree is walked). */
export const FLOW_NODE = object(
  {
    name: custom('a job name (a string)', (v) => validateJobName(v)),
    queueName: custom('a queue name', (v) => validateQueueName(v)),
    data: anything(),
    prefix: str(1),
    opts: anything('job options'),
    children: custom('an array of flow nodes', (value, path) => {
      if (!Array.isArray(value)) throw refuse(path, value, 'an array of flow nodes');
    }),
  },
  {
    what: '{ name, queueName, data?, opts?, children? }',
    refine(value, path) {
      if (value.queueName === undefined) validateQueueName(value.queueName);
      if (value.name === undefined) throw refuse(`${path}.name`, undefined, 'a job name (a string)');
    },
  },
);

/** `flowProducer.getFlow(opts)`. */
export const NODE_OPTIONS = object(
  {
    queueName: custom('a queue name', (v) => validateQueueName(v)),
    id: str(1, 1024),
    prefix: str(1),
    depth: int(1, 1000),
    maxChildren: int(0, 1_000_000),
  },
  {
    what: '{ queueName, id, prefix?, depth?, maxChildren? }',
    refine(value, path) {
      if (value.queueName === undefined) validateQueueName(value.queueName);
      if (value.id === undefined) throw refuse(`${path}.id`, undefined, 'a job id: a non-empty string');
    },
  },
);

/** An entry of `queue.addBulk(jobs)`. */
export const BULK_JOB = object(
  { name: custom('a job name (a string)', (v) => validateJobName(v)), data: anything(), opts: anything('job options') },
  {
    what: '{ name, data, opts? }',
    refine(value, path) {
      if (value.name === undefined) throw refuse(`${path}.name`, undefined, 'a job name (a string)');
    },
  },
);

/** A group's rate limit (`setGroupOptions(id, { limiter })`). */
export const GROUP_LIMITER = limiterSpec(true);

export { checkOptional };
