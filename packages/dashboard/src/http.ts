/**
 * The dashboard API's plumbing: routes (a method, a path pattern with `:name` parameters, and the
 * audit action of a mutation), JSON replies with the security headers, query-parameter and body
 * checks (HttpError 400 on bad input), and the redacted view of a job every reply uses.
 */
import { JOB_STATES, type Admin, type Job, type JobState, type Queue, type QueueOverview } from 'hopper-queue';
import { HttpError, SECURITY_HEADERS, redactDeep, type Principal, type Redact } from './security.js';

export type Params = Record<string, string>;
export type RouteHandler = (ctx: {
  request: Request;
  url: URL;
  params: Params;
  who: Principal;
  body: Record<string, unknown>;
}) => Promise<unknown>;
export interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  names: string[];
  /** The action recorded in the audit log (mutations only). */
  action?: string;
  handler: RouteHandler;
}

export const json = (status: number, body: unknown, extra: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS, ...extra },
  });

export function intParam(url: URL, name: string, fallback: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new HttpError(400, `${name} must be an integer from 0 to ${max}, not "${raw}".`);
  return n;
}

export function stateParam(url: URL, fallback = 'waiting'): JobState {
  const state = url.searchParams.get('state') ?? fallback;
  if (!(JOB_STATES as readonly string[]).includes(state)) throw new HttpError(400, `state must be one of ${JOB_STATES.join(', ')}.`);
  return state as JobState;
}

/** Job ids of a bulk action: a non-empty array of strings, at most 1,000. */
export function idsOf(body: Record<string, unknown>): string[] {
  const ids = body.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || ids.some((id) => typeof id !== 'string' || id === ''))
    throw new HttpError(400, 'ids must be an array of 1 to 1,000 job ids (strings).');
  return ids as string[];
}

/** A job as the API returns it (redacted). */
export function jobView(job: Job, state: string | undefined, redact: Redact): Record<string, unknown> {
  return {
    id: job.id,
    name: job.name,
    state,
    data: redactDeep(job.data, redact),
    opts: redactDeep(job.opts, redact),
    progress: job.progress,
    attemptsMade: job.attemptsMade,
    timestamp: job.timestamp,
    processedOn: job.processedOn ?? null,
    finishedOn: job.finishedOn ?? null,
    failedReason: job.failedReason || null,
    stacktrace: job.stacktrace,
    returnvalue: redactDeep(job.returnvalue, redact),
    parentKey: job.parentKey ?? null,
    delay: job.delay,
    priority: job.priority,
    deadLetterOrigin: job.deadLetterOrigin ?? null,
  };
}

/** Adds a route: `path` under the base path, `:name` segments become params; `action` marks a mutation (audited). */
export type AddRoute = (method: Route['method'], path: string, handler: RouteHandler, action?: string) => void;

/** What the route handlers share: the Admin, the redaction hook, the overview, and queue and job lookups (404 when missing). */
export interface RouteContext {
  admin: Admin;
  redact: Redact;
  overview: () => Promise<QueueOverview[]>;
  queueOf: (params: Params) => Promise<Queue>;
  jobOf: (queue: Queue, id: string) => Promise<Job>;
}
