/**
 * The dashboard API's plumbing: routes (a method, a path pattern with `:name` parameters, and the
 * audit action of a mutation), JSON replies with the security headers, query-parameter and body
 * checks (HttpError 400 on bad input), and the redacted, byte-bounded view of a job every reply uses.
 */
import { JOB_STATES, type Admin, type Job, type JobState, type Queue, type QueueOverview } from 'hopper-queue';
import { HttpError, SECURITY_HEADERS, type Principal } from './security.js';
import type { Redactor } from './redaction.js';
import { Budget } from './bounded.js';
import type { DashboardLimits } from './limits.js';

export type Params = Record<string, string>;

/** What a route handler gets. */
export interface HandlerContext {
  request: Request;
  url: URL;
  params: Params;
  who: Principal;
  /** The JSON body of a POST (an object; `{}` when empty). */
  body: Record<string, unknown>;
  /** The reply's byte budget: values put in the reply go through it. */
  budget: Budget;
}

export type RouteHandler = (ctx: HandlerContext) => Promise<unknown>;
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
  if (!/^\d{1,16}$/.test(raw) || !Number.isSafeInteger(n) || n > max)
    throw new HttpError(400, `${name} must be an integer from 0 to ${max}, not "${raw.slice(0, 50)}".`);
  return n;
}

export function stateParam(url: URL, fallback = 'waiting'): JobState {
  const state = url.searchParams.get('state') ?? fallback;
  if (!(JOB_STATES as readonly string[]).includes(state)) throw new HttpError(400, `state must be one of ${JOB_STATES.join(', ')}.`);
  return state as JobState;
}

/** Most ids a bulk action (bulk, dead-letter replay) takes in one request. */
export const MAX_BULK_IDS = 1000;

/** Job ids of a bulk action: a non-empty array of strings, at most {@link MAX_BULK_IDS}. */
export function idsOf(body: Record<string, unknown>): string[] {
  const ids = body.ids;
  if (
    !Array.isArray(ids) ||
    ids.length === 0 ||
    ids.length > MAX_BULK_IDS ||
    ids.some((id) => typeof id !== 'string' || id === '' || id.length > 1000)
  )
    throw new HttpError(
      400,
      `ids must be an array of 1 to ${MAX_BULK_IDS.toLocaleString('en')} job ids (non-empty strings); send more in several requests.`,
    );
  return ids as string[];
}

/** A job as the API shows it: every value redacted, free text through the text hook. Not yet bounded. */
export function redactedJob(job: Job, state: string | undefined, redactor: Redactor): Record<string, unknown> {
  return {
    id: job.id,
    name: job.name,
    state,
    data: redactor.value(job.data),
    opts: redactor.value(job.opts),
    progress: typeof job.progress === 'string' ? redactor.text(job.progress, 'progress') : redactor.value(job.progress),
    attemptsMade: job.attemptsMade,
    timestamp: job.timestamp,
    processedOn: job.processedOn ?? null,
    finishedOn: job.finishedOn ?? null,
    failedReason: job.failedReason ? redactor.text(job.failedReason, 'failedReason') : null,
    stacktrace: (job.stacktrace ?? []).map((line) => redactor.text(String(line), 'stacktrace')),
    returnvalue: redactor.value(job.returnvalue),
    parentKey: job.parentKey ?? null,
    delay: job.delay,
    priority: job.priority,
    deadLetterOrigin: job.deadLetterOrigin ?? null,
  };
}

/** Fields of a job view always shown whole, whatever the budget: small, and what a reader needs to name the job. */
const IDENTITY = new Set(['id', 'state', 'attemptsMade', 'timestamp', 'processedOn', 'finishedOn', 'delay', 'priority', 'parentKey']);
/** Bytes of a job's name shown at least (a list stays readable when the reply is full). */
const NAME_BYTES = 1024;

/** A redacted job view within the reply's budget (each other field cut to `maxValueBytes` at most). */
export function boundedJob(view: Record<string, unknown>, budget: Budget): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(view)) {
    if (IDENTITY.has(key)) {
      budget.left -= 16 + (typeof value === 'string' ? value.length : 0);
      out[key] = value;
    } else if (key === 'name' && typeof value === 'string') {
      const own = new Budget(NAME_BYTES, NAME_BYTES);
      out[key] = own.fitText(value);
      budget.cuts += own.cuts;
      budget.left -= Math.min(value.length, NAME_BYTES) + 8;
    } else out[key] = budget.fit(value);
  }
  return out;
}

/** Jobs as a list shows them: redacted, then bounded in order (later jobs are cut first once the reply is full). */
export function jobList(jobs: { job: Job; state: string | undefined }[], redactor: Redactor, budget: Budget): Record<string, unknown>[] {
  return jobs.map(({ job, state }) => boundedJob(redactedJob(job, state, redactor), budget));
}

/** Adds a route: `path` under the base path, `:name` segments become params; `action` marks a mutation (audited). */
export type AddRoute = (method: Route['method'], path: string, handler: RouteHandler, action?: string) => void;

/** What the route handlers share: the Admin, the redaction, the overview, queue and job lookups (404 when missing), the limits. */
export interface RouteContext {
  admin: Admin;
  redactor: Redactor;
  limits: DashboardLimits;
  overview: () => Promise<QueueOverview[]>;
  queueOf: (params: Params) => Promise<Queue>;
  jobOf: (queue: Queue, id: string) => Promise<Job>;
}
