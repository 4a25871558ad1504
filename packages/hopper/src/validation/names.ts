/**
 * Names that become part of storage keys or identify a job: queue names, the key prefix, job ids,
 * group ids, job names and priorities. Each refusal keeps BullMQ's key phrase first (code migrated
 * from BullMQ matches it) and says how to fix the value.
 */
import { InvalidJobIdError, InvalidNameError, InvalidOptionsError } from '../job/errors.js';
import { hasLoneSurrogate, showValue } from './kit.js';

/** Longest queue name. */
export const MAX_QUEUE_NAME_LENGTH = 200;
/** Longest key prefix. */
export const MAX_PREFIX_LENGTH = 200;
/** Longest group id. */
export const MAX_GROUP_ID_LENGTH = 256;
/** Largest priority: 2^21 - 1 (BullMQ's range, 0 to 2097151). */
export const MAX_PRIORITY = 2 ** 21 - 1;
/** Longest custom job id. */
export const MAX_JOB_ID_LENGTH = 255;

const SURROGATE_HINT = 'it holds a lone surrogate (half of a UTF-16 pair), which has no UTF-8 form: two such ids would be stored alike';

/** Checks a queue name: it becomes part of Redis keys. */
export function validateQueueName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidNameError(`Queue name must be provided: a queue name must be a non-empty string, got ${showValue(name)}.`);
  }
  if (name.length > MAX_QUEUE_NAME_LENGTH) {
    throw new InvalidNameError(
      `Queue name "${name.slice(0, 40)}..." is ${name.length} characters long: use at most ${MAX_QUEUE_NAME_LENGTH}.`,
    );
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[:{}\s\u0000-\u001f*?[\]]/.test(name)) {
    if (name.includes(':')) {
      // BullMQ's key phrase first, for code that matches it.
      throw new InvalidNameError(
        `Queue name cannot contain :, got "${name}": ':' separates the parts of Redis keys. Use letters, digits, '-', '_' or '.'.`,
      );
    }
    throw new InvalidNameError(
      `Queue name "${name}" contains a character that would break Redis keys (':', '{', '}', '*', '?', '[', ']', whitespace or a control character): use letters, digits, '-', '_' or '.'.`,
    );
  }
  if (hasLoneSurrogate(name)) throw new InvalidNameError(`Queue name ${showValue(name)} is refused: ${SURROGATE_HINT}.`);
}

/**
 * Checks a key prefix. Keys are `<prefix>:{<queue>}:...`, or `<prefix>:<queue>:...` when the
 * prefix is a `{tag}` (BullMQ's Redis Cluster convention: the tag is the hash tag of every queue
 * under it). So that two prefixes never share keys (and a SCAN of one queue's keys never reaches
 * another's), a prefix is one or more segments separated by `:`, none empty, without `{`, `}`,
 * the SCAN pattern characters `*`, `?`, `[`, `]`, `\`, whitespace or control characters; or a
 * `{tag}` alone.
 */
export function validatePrefix(prefix: unknown): asserts prefix is string {
  const accepted =
    "a non-empty string of ':'-separated segments without '{', '}', '*', '?', '[', ']', '\\' or whitespace (e.g. 'hopper', 'app:jobs'), or a '{tag}' alone for Redis Cluster (e.g. '{app}')";
  const refuse = (why: string): never => {
    throw new InvalidNameError(`The prefix must be ${accepted}, got ${showValue(prefix)}: ${why}.`);
  };
  if (typeof prefix !== 'string' || prefix.length === 0) return refuse('a prefix is needed');
  if (prefix.length > MAX_PREFIX_LENGTH) return refuse(`it is ${prefix.length} characters long, over ${MAX_PREFIX_LENGTH}`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\s\u0000-\u001f*?[\]\\]/.test(prefix)) return refuse('it holds whitespace, a control character or a SCAN pattern character');
  if (hasLoneSurrogate(prefix)) return refuse(SURROGATE_HINT);
  if (prefix.includes('{') || prefix.includes('}')) {
    if (/^\{[^{}:]+\}$/.test(prefix)) return;
    return refuse(
      "a hash tag must be the whole prefix, '{tag}' (a tag among other segments would make this prefix's keys overlap another prefix's)",
    );
  }
  if (prefix.split(':').includes('')) return refuse("a segment is empty (a leading, trailing or doubled ':')");
}

/** Checks a job name (it is stored, not used in keys). */
export function validateJobName(name: unknown): asserts name is string {
  if (typeof name !== 'string') {
    throw new InvalidNameError(`A job name must be a string, got ${typeof name}.`);
  }
  if (hasLoneSurrogate(name)) throw new InvalidNameError(`Job name ${showValue(name)} is refused: ${SURROGATE_HINT}.`);
}

/**
 * Checks a custom job id (DESIGN, "Ids"). An empty one is refused (BullMQ ignores it and generates
 * an id): an empty id is almost always a missing value, and ignoring it would silently drop the
 * idempotence the caller asked for.
 */
export function validateJobId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidJobIdError(`A custom jobId must be a non-empty string, got ${showValue(id)}.`);
  }
  if (id.length > MAX_JOB_ID_LENGTH) {
    throw new InvalidJobIdError(`Custom jobId "${id.slice(0, 40)}..." is ${id.length} characters long: use at most ${MAX_JOB_ID_LENGTH}.`);
  }
  if (/^-?\d+$/.test(id)) {
    throw new InvalidJobIdError(
      `Custom Id cannot be integers: custom jobId "${id}" looks like an integer, which would collide with automatic ids: add a non-digit, e.g. "job-${id}".`,
    );
  }
  if (hasLoneSurrogate(id)) throw new InvalidJobIdError(`Custom jobId ${showValue(id)} is refused: ${SURROGATE_HINT}.`);
}

/** Checks a group id (it becomes part of Redis keys). */
export function validateGroupId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '' || id.length > MAX_GROUP_ID_LENGTH || hasLoneSurrogate(id)) {
    throw new InvalidOptionsError(
      `A group id must be a non-empty string of at most ${MAX_GROUP_ID_LENGTH} characters, got ${showValue(id)}: ` +
        `use the tenant or customer id as a string${typeof id === 'string' && hasLoneSurrogate(id) ? ` (${SURROGATE_HINT})` : ''}.`,
    );
  }
}

/** A priority, refused with BullMQ's key phrases ('Priority should not be float', 'Priority should be between 0 and 2097151'). */
export function checkPriority(value: unknown): void {
  if (typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value)) {
    throw new InvalidOptionsError(`Priority should not be float: priority must be an integer from 0 to ${MAX_PRIORITY}, got ${value}.`);
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_PRIORITY) {
    throw new InvalidOptionsError(
      `Priority should be between 0 and ${MAX_PRIORITY}: priority must be an integer from 0 to ${MAX_PRIORITY}, got ${showValue(value)}.`,
    );
  }
}

/** Checks an existing job's id given to a method (getJob, cancelJob, readStream...): a non-empty string. */
export function validateJobRef(id: unknown, where: string): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 1024 || hasLoneSurrogate(id)) {
    throw InvalidOptionsError.of(`${where}(jobId)`, id, 'a job id: a non-empty, well-formed string');
  }
}
