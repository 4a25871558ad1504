/**
 * The dashboard's one error handler: what a failed request answers. The dashboard's own refusals
 * (HttpError) and Hopper's typed errors say what was wrong; anything else is a 500 that names a
 * reference and nothing more (never a stack trace, a file path or a driver's message), the details
 * going to the `onError` hook (the server's log by default).
 */
import { randomBytes } from 'node:crypto';
import { ErrorCode, hopperErrorCode } from 'hopper-queue';
import { HttpError } from './security.js';
import { json } from './http.js';

/** Where the dashboard reports an unexpected error (its reply only names `ref`). */
export type ErrorHook = (error: unknown, context: { method: string; path: string; ref: string }) => void;

/** The default hook: one line on stderr with the reference, then the error. */
export const logError: ErrorHook = (error, { method, path, ref }) => {
  console.error(`hopper-dashboard: internal error ${ref} on ${method} ${path}:`, error);
};

const BAD_INPUT: readonly string[] = [
  ErrorCode.InvalidOptions,
  ErrorCode.InvalidName,
  ErrorCode.InvalidJobId,
  ErrorCode.InvalidData,
  ErrorCode.InvalidSchedule,
  ErrorCode.UnsupportedOption,
];
const UNAVAILABLE: readonly string[] = [ErrorCode.Closed, ErrorCode.RedisFull, ErrorCode.DatasetReset, ErrorCode.UnsupportedRedis];

/** The status and public message of an error; `ref` set when it is unexpected (500). */
export function describeError(error: unknown): { status: number; message: string; headers: Record<string, string>; unexpected: boolean } {
  if (error instanceof HttpError) return { status: error.status, message: error.message, headers: error.headers, unexpected: false };
  const code = hopperErrorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === ErrorCode.JobNotFound || code === ErrorCode.QueueNotFound) return { status: 404, message, headers: {}, unexpected: false };
  if (code !== undefined && BAD_INPUT.includes(code)) return { status: 400, message, headers: {}, unexpected: false };
  if (code !== undefined && UNAVAILABLE.includes(code)) return { status: 503, message, headers: { 'retry-after': '5' }, unexpected: false };
  // A script's failure is the engine's bug, not the caller's: no detail in the reply.
  if (code !== undefined && code !== ErrorCode.Script) return { status: 409, message, headers: {}, unexpected: false };
  return { status: 500, message: 'Internal error.', headers: {}, unexpected: true };
}

/** The reply to a failed request; unexpected errors go to `hook` with a reference the reply names. */
export function errorReply(error: unknown, request: { method: string; path: string }, hook: ErrorHook): Response {
  const d = describeError(error);
  if (!d.unexpected) return json(d.status, { error: d.message }, d.headers);
  const ref = randomBytes(6).toString('hex');
  try {
    hook(error, { method: request.method, path: request.path, ref });
  } catch {
    // a throwing hook changes nothing for the caller
  }
  return json(500, { error: `Internal error (reference ${ref}): the details are in the server's log.`, ref });
}

/** The message a live stream's error event shows. */
export function streamErrorMessage(error: unknown): string {
  const d = describeError(error);
  return d.unexpected ? 'The overview could not be read (see the server log).' : d.message;
}
