/**
 * The dashboard's HTTP API, as one Fetch-style handler (`(Request) => Promise<Response>`) that
 * any server can mount under any base path (Node `http`, Express: see `toNodeListener`). It reads
 * and acts through Hopper's `Admin` and Queue APIs; every route is authenticated, every mutation
 * CSRF-checked, audited and role-checked, every reply JSON (job content is never rendered as
 * HTML) with secrets redacted; `metrics` serves Prometheus text (metrics-route.ts).
 */
import {
  Admin,
  ErrorCode,
  JOB_STATES,
  hopperErrorCode,
  nextFireTimes,
  type ConnectionOptions,
  type Job,
  type JobState,
  type Queue,
} from 'hopper';
import {
  HttpError,
  SECURITY_HEADERS,
  authenticate,
  checkAuth,
  checkCsrf,
  defaultRedact,
  redactDeep,
  type AuthOptions,
  type Principal,
  type Redact,
} from './security.js';
import { metricsRoute } from './metrics-route.js';

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** How to reach Redis (as for a Queue). */
  connection?: ConnectionOptions;
  /** The key prefix of the queues (default `hopper`). */
  prefix?: string;
  /** Where the dashboard is mounted (default `/`): its API is under `<basePath>api/`. */
  basePath?: string;
  /** Authentication: required (see AuthOptions; `false` turns it off explicitly). */
  auth: AuthOptions;
  /** Hides fields in every reply (default: values of password-, secret-, token- and key-like fields). */
  redact?: Redact;
  /** How often the live stream sends the overview (ms, default 2,000). */
  streamIntervalMs?: number;
}

/** A mounted dashboard: its handler, and `close()` for the connections it opened. */
export interface Dashboard {
  /** Handles one request (a Response for every request under the base path; 404 elsewhere). */
  fetch(request: Request): Promise<Response>;
  /** Closes the dashboard's Redis connections and ends its live streams. */
  close(): Promise<void>;
}

type Params = Record<string, string>;
type RouteHandler = (ctx: {
  request: Request;
  url: URL;
  params: Params;
  who: Principal;
  body: Record<string, unknown>;
}) => Promise<unknown>;
interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  names: string[];
  /** The action recorded in the audit log (mutations only). */
  action?: string;
  handler: RouteHandler;
}

const json = (status: number, body: unknown, extra: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS, ...extra },
  });

function intParam(url: URL, name: string, fallback: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new HttpError(400, `${name} must be an integer from 0 to ${max}, not "${raw}".`);
  return n;
}

/** A job as the API returns it (redacted). */
function jobView(job: Job, state: string | undefined, redact: Redact): Record<string, unknown> {
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
  };
}

/**
 * Creates the dashboard's handler.
 *
 * @throws TypeError without an `auth` setting (secure by default).
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const auth = checkAuth(options.auth);
  const redact = options.redact ?? defaultRedact;
  const basePath = (options.basePath ?? '/').replace(/\/?$/, '/');
  const admin = new Admin({ connection: options.connection, prefix: options.prefix });
  const streams = new Set<() => void>();
  const interval = options.streamIntervalMs ?? 2_000;

  const queueOf = async (params: Params): Promise<Queue> => {
    try {
      return await admin.queue(params.queue);
    } catch (error) {
      throw new HttpError(404, (error as Error).message);
    }
  };
  const jobOf = async (queue: Queue, id: string): Promise<Job> => {
    const job = await queue.getJob(id);
    if (!job) throw new HttpError(404, `No job "${id}" in queue "${queue.name}".`);
    return job;
  };

  const metrics = metricsRoute(admin);
  const routes: Route[] = [];
  const route = (method: Route['method'], path: string, handler: RouteHandler, action?: string): void => {
    const names: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_m, name: string) => (names.push(name), '([^/]+)'))}$`);
    routes.push({ method, pattern, names, handler, action });
  };

  route('GET', 'api/queues', async () => admin.overview());
  route('GET', 'api/queues/:queue/jobs', async ({ url, params }) => {
    const queue = await queueOf(params);
    const state = url.searchParams.get('state') ?? 'waiting';
    if (!(JOB_STATES as readonly string[]).includes(state)) throw new HttpError(400, `state must be one of ${JOB_STATES.join(', ')}.`);
    const offset = intParam(url, 'offset', 0, 10_000_000);
    const limit = intParam(url, 'limit', 50, 500);
    const total = (await queue.getJobCounts(state as JobState))[state] ?? 0;
    const jobs = limit === 0 ? [] : await queue.getJobs(state as JobState, offset, offset + limit - 1);
    return { state, offset, limit, total, jobs: jobs.map((j) => jobView(j, state, redact)) };
  });
  route('GET', 'api/queues/:queue/jobs/:id', async ({ params }) => {
    const queue = await queueOf(params);
    const job = await jobOf(queue, params.id);
    const [state, logs] = await Promise.all([job.getState(), queue.getJobLogs(params.id, -100, -1)]);
    return { ...jobView(job, state, redact), logs: logs.logs, logCount: logs.count };
  });
  route('GET', 'api/queues/:queue/schedulers', async ({ params }) => (await queueOf(params)).getJobSchedulerStates(0, 999, true));
  route('GET', 'api/queues/:queue/schedulers/:id/preview', async ({ url, params }) => {
    const s = await (await queueOf(params)).getJobSchedulerState(params.id);
    if (!s) throw new HttpError(404, `No job scheduler "${params.id}".`);
    const count = intParam(url, 'count', 10, 100);
    const repeat = {
      pattern: s.pattern,
      every: s.every,
      tz: s.tz || undefined,
      startDate: s.startDate,
      endDate: s.endDate,
      offset: s.offset,
    };
    return { id: s.key, next: nextFireTimes(repeat, { from: Date.now(), count }) };
  });
  route('GET', 'api/audit', async ({ url }) => admin.getAuditLog(intParam(url, 'limit', 100, 1000)));

  route(
    'POST',
    'api/queues/:queue/jobs/:id/retry',
    async ({ params }) => {
      const job = await jobOf(await queueOf(params), params.id);
      const state = await job.getState();
      if (state !== 'failed' && state !== 'completed')
        throw new HttpError(409, `Job "${params.id}" is ${state}: only failed or completed jobs are retried.`);
      await job.retry(state);
      return { retried: params.id };
    },
    'retry',
  );
  route(
    'POST',
    'api/queues/:queue/jobs/:id/promote',
    async ({ params }) => {
      await (await jobOf(await queueOf(params), params.id)).promote();
      return { promoted: params.id };
    },
    'promote',
  );
  route(
    'POST',
    'api/queues/:queue/jobs/:id/remove',
    async ({ params }) => {
      const removed = await (await queueOf(params)).remove(params.id);
      if (removed === 0) throw new HttpError(404, `No job "${params.id}".`);
      return { removed: params.id };
    },
    'remove',
  );
  route(
    'POST',
    'api/queues/:queue/jobs/:id/cancel',
    async ({ params, body }) => {
      const reason = typeof body.reason === 'string' && body.reason !== '' ? body.reason.slice(0, 500) : 'cancelled from the dashboard';
      return { outcome: await (await queueOf(params)).cancelJob(params.id, reason) };
    },
    'cancel',
  );
  route('POST', 'api/queues/:queue/pause', async ({ params }) => (await (await queueOf(params)).pause(), { paused: true }), 'pause');
  route('POST', 'api/queues/:queue/resume', async ({ params }) => (await (await queueOf(params)).resume(), { paused: false }), 'resume');
  route(
    'POST',
    'api/queues/:queue/clean',
    async ({ params, body }) => {
      const state = typeof body.state === 'string' ? body.state : 'completed';
      if (!['completed', 'failed', 'waiting', 'prioritized', 'delayed'].includes(state))
        throw new HttpError(400, `state "${state}" cannot be cleaned.`);
      const grace = typeof body.graceMs === 'number' && body.graceMs >= 0 ? body.graceMs : 0;
      const removed = await (await queueOf(params)).clean(grace, 1000, state as 'completed');
      return { removed: removed.length };
    },
    'clean',
  );
  route(
    'POST',
    'api/queues/:queue/schedulers/:id/:op',
    async ({ params }) => {
      const queue = await queueOf(params);
      if (params.op === 'pause') return { changed: await queue.pauseJobScheduler(params.id) };
      if (params.op === 'resume') return { changed: await queue.resumeJobScheduler(params.id) };
      if (params.op === 'trigger') return { jobId: (await queue.triggerJobScheduler(params.id))?.id ?? null };
      throw new HttpError(404, `Unknown scheduler action "${params.op}" (pause, resume, trigger).`);
    },
    'scheduler',
  );
  route(
    'POST',
    'api/queues/:queue/dead-letters/replay',
    async ({ params, body }) => {
      const ids = Array.isArray(body.ids) ? body.ids.filter((x): x is string => typeof x === 'string').slice(0, 10_000) : undefined;
      return (await queueOf(params)).replayDeadLetters(ids ? { ids } : {});
    },
    'replay',
  );

  /** The live stream: the overview now and every interval, keep-alive comments, ends on disconnect. */
  const stream = (request: Request): Response => {
    const encoder = new TextEncoder();
    let stop = (): void => undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let closed = false;
        const send = async (): Promise<void> => {
          try {
            const overview = await admin.overview();
            if (!closed) controller.enqueue(encoder.encode(`event: overview\ndata: ${JSON.stringify(overview)}\n\n`));
          } catch (error) {
            if (!closed)
              controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ error: (error as Error).message })}\n\n`));
          }
        };
        const tick = setInterval(() => void send(), interval);
        const keepAlive = setInterval(() => controller.enqueue(encoder.encode(': keep-alive\n\n')), 15_000);
        stop = () => {
          if (closed) return;
          closed = true;
          clearInterval(tick);
          clearInterval(keepAlive);
          streams.delete(stop);
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        streams.add(stop);
        request.signal.addEventListener('abort', stop);
        void send();
      },
      cancel() {
        stop();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream', connection: 'keep-alive', ...SECURITY_HEADERS } });
  };

  return {
    async fetch(request) {
      const url = new URL(request.url);
      if (!url.pathname.startsWith(basePath)) return json(404, { error: 'Not found.' });
      const path = url.pathname.slice(basePath.length);
      try {
        const who = await authenticate(auth, request);
        if (request.method === 'GET' && path === 'api/stream') return stream(request);
        if (request.method === 'GET' && path === 'metrics') return metrics(request);
        for (const r of routes) {
          const m = r.pattern.exec(path);
          if (!m) continue;
          if (request.method !== r.method) continue;
          const params: Params = {};
          r.names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1])));
          let body: Record<string, unknown> = {};
          if (r.method === 'POST') {
            checkCsrf(request);
            if (who.role !== 'operator') throw new HttpError(403, `Refused: ${who.user} is a viewer; this action needs the operator role.`);
            const text = await request.text();
            if (text) {
              try {
                body = JSON.parse(text) as Record<string, unknown>;
              } catch {
                throw new HttpError(400, 'The request body must be JSON.');
              }
            }
          }
          const result = await r.handler({ request, url, params, who, body });
          if (r.action) {
            const target = params.id ? `${params.queue}/${params.id}` : params.queue;
            await admin.recordAudit({
              at: Date.now(),
              who: who.user,
              action: r.action,
              target,
              detail: params.op ?? JSON.stringify(result).slice(0, 200),
            });
          }
          return json(200, result);
        }
        const known = routes.some((r) => r.pattern.test(path));
        return json(known ? 405 : 404, { error: known ? `Method ${request.method} not allowed here.` : 'Not found.' });
      } catch (error) {
        if (error instanceof HttpError)
          return json(error.status, { error: error.message }, error.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
        // Hopper's typed errors: a missing job is 404, bad input 400, any other refusal a conflict.
        const code = hopperErrorCode(error);
        const status =
          code === ErrorCode.JobNotFound || code === ErrorCode.QueueNotFound
            ? 404
            : code === ErrorCode.InvalidOptions || code === ErrorCode.InvalidName || code === ErrorCode.InvalidJobId
              ? 400
              : code !== undefined
                ? 409
                : 500;
        return json(status, { error: error instanceof Error ? error.message : String(error) });
      }
    },
    async close() {
      for (const stop of [...streams]) stop();
      await admin.close();
    },
  };
}
