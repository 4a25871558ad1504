/**
 * The messages a sandbox pool and its children exchange (over the IPC channel of a child process,
 * or a worker thread's port), and the error encoding both sides share.
 *
 * Every value that crosses is plain JSON, in both kinds of child, so a processor behaves the same
 * in a process and in a thread (a `Date` arrives as a string, `undefined` fields vanish).
 *
 * A child runs one job at a time. The life of a run:
 *
 * ```
 * child  ──ready──────────────────────────►  parent     (processor file loaded; or load-failed)
 * parent ──run {runId, job, aborted?}──────►  child
 * child  ──request {id, method, …}─────────►  parent     (job.updateProgress/log/updateData/step/stream)
 * parent ──reply {id, ok, value|error}─────►  child
 * parent ──step-run {id}───────────────────►  child      (the parent's step hook wants the fn run)
 * child  ──step-ran {id, ok, value|error}──►  parent
 * parent ──abort {runId, reason}───────────►  child      (the job's signal fired)
 * child  ──done {runId, ok, value|error}───►  parent
 * child  ──fatal {error}───────────────────►  parent     (uncaught error; the child exits next)
 * ```
 *
 * The child's side is written in plain JavaScript in `child-source.ts`; keep the two in step.
 */

import { showValue, thrownParts } from '../../job/thrown.js';

/** An error as it crosses between parent and child: enough to rebuild it on the other side. */
export interface SerializedError {
  /** `error.name` (`'UnrecoverableError'`, `'TypeError'`, ...): the worker recognises errors by it. */
  name: string;
  message: string;
  stack?: string;
  /** `error.code` when it is a string or a number (`'ERR_MODULE_NOT_FOUND'`, ...). */
  code?: string | number;
}

/**
 * An abort signal's reason as it crosses: an error, or a string as given to `worker.cancelJob`
 * (the child's `signal.reason` is then that same string).
 */
export type SerializedReason = SerializedError | { text: string };

/** Encodes an abort signal's reason: a string stays a string, anything else is encoded as an error. */
export function serializeReason(reason: unknown): SerializedReason {
  return typeof reason === 'string' ? { text: reason } : serializeError(reason);
}

/** The methods of the child's job object that call the parent. */
export type HookMethod = 'updateProgress' | 'log' | 'updateData' | 'step' | 'streamWrite' | 'streamEnd';

/** A call from the child's job object to the parent's hooks; answered by a {@link ReplyMessage}. */
export type RequestMessage = { type: 'request'; runId: number; id: number } & (
  | { method: 'updateProgress'; progress: unknown }
  | { method: 'log'; line: string }
  | { method: 'updateData'; data: unknown }
  | { method: 'step'; key: string }
  /** `job.stream.write(chunk)`: a string, or any other JSON value. */
  | { method: 'streamWrite'; chunk: unknown }
  | { method: 'streamEnd' }
);

/** Parent to child: the answer to a {@link RequestMessage} with the same `id`. */
export type ReplyMessage =
  { type: 'reply'; id: number; ok: true; value: unknown } | { type: 'reply'; id: number; ok: false; error: SerializedError };

/** Parent to child. */
export type ParentMessage =
  /** Run the processor on `job`; `aborted` set means the job's signal had already fired. */
  | { type: 'run'; runId: number; job: object; aborted?: SerializedReason }
  /** The job's signal fired: abort the processor's signal with this reason. */
  | { type: 'abort'; runId: number; reason: SerializedReason }
  | ReplyMessage
  /** Run the function the child passed to `job.step` in request `id`, and answer with `step-ran`. */
  | { type: 'step-run'; runId: number; id: number };

/** Child to parent. */
export type ChildMessage =
  /** The processor file loaded and exports a function: the child can take runs. */
  | { type: 'ready' }
  /** The processor file could not be loaded (missing, syntax error, no function exported). */
  | { type: 'load-failed'; error: SerializedError }
  | RequestMessage
  /** The result of the step function of request `id`. */
  | { type: 'step-ran'; runId: number; id: number; ok: true; value: unknown }
  | { type: 'step-ran'; runId: number; id: number; ok: false; error: SerializedError }
  /** The processor settled. */
  | { type: 'done'; runId: number; ok: true; value: unknown }
  | { type: 'done'; runId: number; ok: false; error: SerializedError }
  /** An error nobody caught (thrown from a timer, a promise nobody awaited): the child exits next. */
  | { type: 'fatal'; error: SerializedError };

/**
 * Encodes any thrown value; never throws (job/thrown.ts reads it). A non-Error becomes an `Error`
 * whose message shows the value.
 */
export function serializeError(value: unknown): SerializedError {
  const message = readField(value, 'message');
  if (typeof message === 'string' || isError(value)) {
    const name = readField(value, 'name');
    const stack = readField(value, 'stack');
    const out: SerializedError = {
      name: typeof name === 'string' && name ? name : 'Error',
      message: typeof message === 'string' ? message : thrownParts(value).message,
    };
    if (typeof stack === 'string') out.stack = stack;
    const code = readField(value, 'code');
    if (typeof code === 'string' || typeof code === 'number') out.code = code;
    return out;
  }
  return { name: 'Error', message: `A non-Error value was thrown: ${showValue(value)}` };
}

/** `value[key]` when `value` is an object and reading it does not throw. */
function readField(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function isError(value: unknown): boolean {
  try {
    return value instanceof Error;
  } catch {
    return false;
  }
}

/**
 * Rebuilds an error with the same name, message, stack and code. It is a plain `Error` whose
 * `name` is the original's, so checks by name (`UnrecoverableError`) keep working.
 */
export function deserializeError(encoded: SerializedError): Error {
  const error = new Error(encoded.message) as Error & { code?: string | number };
  error.name = encoded.name;
  if (encoded.stack !== undefined) error.stack = encoded.stack;
  if (encoded.code !== undefined) error.code = encoded.code;
  return error;
}
