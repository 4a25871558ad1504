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
  type QueueOverview,
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
import { loadAssets, type Asset } from './static.js';
import {
  MAX_SCAN,
  SEARCH_FIELDS,
  duplicateOptions,
  latency,
  matcher,
  perMinuteSeries,
  scanJobs,
  storedOutput,
  type SearchField,
} from './views.js';

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
  /**
   * How long the list of queue names is reused before it is listed again in the background (ms,
   * default 30,000). Listing scans the keyspace (seconds with a million jobs); counts are always fresh.
   */
  queueListTtlMs?: number;
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

function stateParam(url: URL, fallback = 'waiting'): JobState {
  const state = url.searchParams.get('state') ?? fallback;
  if (!(JOB_STATES as readonly string[]).includes(state)) throw new HttpError(400, `state must be one of ${JOB_STATES.join(', ')}.`);
  return state as JobState;
}

/** Job ids of a bulk action: a non-empty array of strings, at most 1,000. */
function idsOf(body: Record<string, unknown>): string[] {
  const ids = body.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || ids.some((id) => typeof id !== 'string' || id === ''))
    throw new HttpError(400, 'ids must be an array of 1 to 1,000 job ids (strings).');
  return ids as string[];
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
    delay: job.delay,
    priority: job.priority,
    deadLetterOrigin: job.deadLetterOrigin ?? null,
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

  // The overview: fresh counts over a queue list listed at most every queueListTtlMs, in the
  // background (a request never waits for a listing but the first).
  const listTtl = options.queueListTtlMs ?? 30_000;
  let names: string[] | null = null;
  let namesAt = 0;
  let relisting: Promise<void> | null = null;
  const overview = async (): Promise<QueueOverview[]> => {
    if (names === null) {
      const all = await admin.overview();
      names = all.map((o) => o.name);
      namesAt = Date.now();
      return all;
    }
    if (Date.now() - namesAt > listTtl && !relisting) {
      relisting = admin
        .listQueues()
        .then((listed) => {
          names = listed;
          namesAt = Date.now();
        })
        .catch(() => undefined)
        .finally(() => (relisting = null));
    }
    try {
      return await admin.overview(names);
    } catch (error) {
      if (hopperErrorCode(error) !== ErrorCode.QueueNotFound) throw error;
      names = null; // a queue went away: list again now
      return overview();
    }
  };

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

  route('GET', 'api/queues', async () => overview());
  route('GET', 'api/queues/:queue/jobs', async ({ url, params }) => {
    const queue = await queueOf(params);
    const state = url.searchParams.get('state') ?? 'waiting';
    if (!(JOB_STATES as readonly string[]).includes(state)) throw new HttpError(400, `state must be one of ${JOB_STATES.join(', ')}.`);
    const offset = intParam(url, 'offset', 0, 10_000_000);
    const limit = intParam(url, 'limit', 50, 500);
    const order = url.searchParams.get('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc')
      throw new HttpError(400, `order must be asc (oldest first) or desc (newest first), not "${order}".`);
    const total = (await queue.getJobCounts(state as JobState))[state] ?? 0;
    const jobs = limit === 0 ? [] : await queue.getJobs(state as JobState, offset, offset + limit - 1, order === 'asc');
    return { state, offset, limit, order, total, jobs: jobs.map((j) => jobView(j, state, redact)) };
  });
  route('GET', 'api/queues/:queue/jobs/:id', async ({ params }) => {
    const queue = await queueOf(params);
    const job = await jobOf(queue, params.id);
    const [state, logs, steps, pending, processed] = await Promise.all([
      job.getState(),
      queue.getJobLogs(params.id, -100, -1),
      job.getSteps(),
      queue.getDependencies(params.id, 'pending', 0, 49),
      queue.getDependencies(params.id, 'processed', 0, 49),
    ]);
    return {
      ...jobView(job, state, redact),
      logs: logs.logs,
      logCount: logs.count,
      steps: redactDeep(steps, redact),
      output: await storedOutput(queue, params.id, (value) => redactDeep(value, redact)),
      children: {
        pending: pending.items.map((i) => i.id),
        pendingTotal: pending.total,
        processed: processed.items.map((i) => i.id),
        processedTotal: processed.total,
      },
    };
  });
  route('GET', 'api/queues/:queue/search', async ({ url, params }) => {
    const queue = await queueOf(params);
    const q = url.searchParams.get('q') ?? '';
    if (q === '' || q.length > 200) throw new HttpError(400, 'q must be the text to search for (1 to 200 characters).');
    const field = (url.searchParams.get('field') ?? 'any') as SearchField;
    if (!SEARCH_FIELDS.includes(field)) throw new HttpError(400, `field must be one of ${SEARCH_FIELDS.join(', ')}.`);
    const state = stateParam(url);
    const cursor = intParam(url, 'cursor', 0, 100_000_000);
    const scan = intParam(url, 'scan', 1000, MAX_SCAN);
    // An exact id is found at once, whatever the state and the queue's size.
    const exact = cursor === 0 && (field === 'any' || field === 'id') ? await queue.getJob(q) : undefined;
    const exactState = exact ? await exact.getState() : undefined;
    const page = await scanJobs(queue, state, cursor, scan, url.searchParams.get('order') === 'asc', matcher(field, q));
    const matches = page.matches.filter((j) => j.id !== exact?.id).map((j) => jobView(j, state, redact));
    if (exact) matches.unshift(jobView(exact, exactState, redact));
    return { state, field, q, cursor: page.cursor, scanned: page.scanned, total: page.total, jobs: matches };
  });
  route('GET', 'api/queues/:queue/series', async ({ url, params }) => {
    const queue = await queueOf(params);
    const minutes = intParam(url, 'minutes', 60, 1440);
    const [series, lat] = await Promise.all([perMinuteSeries(queue, Math.max(1, minutes)), latency(queue)]);
    return { ...series, latency: lat };
  });
  route('GET', 'api/queues/:queue/groups', async ({ url, params }) => {
    const queue = await queueOf(params);
    const offset = intParam(url, 'offset', 0, 10_000_000);
    const limit = intParam(url, 'limit', 50, 500);
    const [total, groups] = await Promise.all([queue.getGroupsCount(), limit === 0 ? [] : queue.getGroups(offset, offset + limit - 1)]);
    return { total, offset, limit, groups };
  });
  route('GET', 'api/queues/:queue/dead-letters', async ({ url, params }) => {
    const queue = await queueOf(params);
    const name = url.searchParams.get('name') ?? '';
    const reason = url.searchParams.get('reason') ?? '';
    const state = stateParam(url);
    const cursor = intParam(url, 'cursor', 0, 100_000_000);
    const scan = intParam(url, 'scan', 1000, MAX_SCAN);
    const page = await scanJobs(
      queue,
      state,
      cursor,
      scan,
      true,
      (job) =>
        job.deadLetterOrigin !== undefined &&
        (name === '' || job.name === name) &&
        (reason === '' || (job.failedReason ?? '').includes(reason)),
    );
    return {
      state,
      cursor: page.cursor,
      scanned: page.scanned,
      total: page.total,
      jobs: page.matches.map((j) => jobView(j, state, redact)),
    };
  });
  route('GET', 'api/queues/:queue/settings', async ({ params }) => {
    const queue = await queueOf(params);
    const [paused, globalConcurrency, rateLimit, groupDefaults] = await Promise.all([
      queue.isPaused(),
      queue.getGlobalConcurrency(),
      queue.getGlobalRateLimit(),
      queue.getGroupDefaults(),
    ]);
    return { paused, globalConcurrency, rateLimit, groupDefaults };
  });
  route('GET', 'api/queues/:queue/schedulers', async ({ params }) =>
    // The templates' data and options go through the redaction hook, as jobs do.
    (await (await queueOf(params)).getJobSchedulerStates(0, 999, true)).map((s) => redactDeep(s, redact)),
  );
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

  route(
    'POST',
    'api/queues/:queue/jobs/:id/duplicate',
    async ({ params }) => {
      const queue = await queueOf(params);
      const job = await jobOf(queue, params.id);
      const copy = await queue.add(job.name, job.data, duplicateOptions(job.opts));
      return { duplicated: params.id, jobId: copy.id };
    },
    'duplicate',
  );
  /** One job action by name (the single-job routes' rules), for bulk actions. */
  const act = async (queue: Queue, action: string, id: string): Promise<void> => {
    if (action === 'retry') {
      const job = await jobOf(queue, id);
      const state = await job.getState();
      if (state !== 'failed' && state !== 'completed')
        throw new HttpError(409, `Job "${id}" is ${state}: only failed or completed jobs are retried.`);
      await job.retry(state);
    } else if (action === 'promote') await (await jobOf(queue, id)).promote();
    else if (action === 'remove') {
      if ((await queue.remove(id)) === 0) throw new HttpError(404, `No job "${id}".`);
    } else if (action === 'cancel') {
      const outcome = await queue.cancelJob(id, 'cancelled from the dashboard');
      if (outcome === 'missing') throw new HttpError(404, `No job "${id}".`);
    } else throw new HttpError(400, `action must be retry, promote, remove or cancel, not "${action}".`);
  };
  route(
    'POST',
    'api/queues/:queue/bulk',
    async ({ params, body }) => {
      const queue = await queueOf(params);
      const action = typeof body.action === 'string' ? body.action : '';
      if (!['retry', 'promote', 'remove', 'cancel'].includes(action))
        throw new HttpError(400, `action must be retry, promote, remove or cancel, not "${action}".`);
      const ids = idsOf(body);
      let done = 0;
      const failed: { id: string; error: string }[] = [];
      for (const id of ids) {
        try {
          await act(queue, action, id);
          done++;
        } catch (error) {
          failed.push({ id, error: (error as Error).message });
        }
      }
      return { action, done, failed };
    },
    'bulk',
  );
  route(
    'POST',
    'api/queues/:queue/settings',
    async ({ params, body }) => {
      const queue = await queueOf(params);
      if ('globalConcurrency' in body) {
        const c = body.globalConcurrency;
        if (c === null) await queue.removeGlobalConcurrency();
        else if (typeof c === 'number' && Number.isInteger(c) && c > 0) await queue.setGlobalConcurrency(c);
        else throw new HttpError(400, 'globalConcurrency must be a positive integer, or null to remove it.');
      }
      if ('rateLimit' in body) {
        const r = body.rateLimit as { max?: unknown; duration?: unknown } | null;
        if (r === null) await queue.removeGlobalRateLimit();
        else if (
          typeof r === 'object' &&
          Number.isInteger(r.max) &&
          Number.isInteger(r.duration) &&
          (r.max as number) > 0 &&
          (r.duration as number) > 0
        )
          await queue.setGlobalRateLimit(r.max as number, r.duration as number);
        else throw new HttpError(400, 'rateLimit must be { max, duration } (positive integers, duration in ms), or null to remove it.');
      }
      const [globalConcurrency, rateLimit] = await Promise.all([queue.getGlobalConcurrency(), queue.getGlobalRateLimit()]);
      return { globalConcurrency, rateLimit };
    },
    'settings',
  );
  route(
    'POST',
    'api/queues/:queue/groups/:group/:op',
    async ({ params }) => {
      const queue = await queueOf(params);
      if (params.op === 'pause') return { changed: await queue.pauseGroup(params.group) };
      if (params.op === 'resume') return { changed: await queue.resumeGroup(params.group) };
      throw new HttpError(404, `Unknown group action "${params.op}" (pause, resume).`);
    },
    'group',
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
            const current = await overview();
            if (!closed) controller.enqueue(encoder.encode(`event: overview\ndata: ${JSON.stringify(current)}\n\n`));
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

  let assets: Promise<Map<string, Asset> | null> | undefined;
  const serveUi = async (path: string, method: string): Promise<Response> => {
    assets ??= loadAssets();
    const files = await assets;
    if (!files) return json(404, { error: 'The web UI is not built: run `npm run build -w @hopper/dashboard`. The API is under api/.' });
    const asset = files.get(path === '' ? 'index.html' : path);
    if (!asset) return json(404, { error: 'Not found.' });
    return new Response(method === 'HEAD' ? null : asset.body, {
      headers: { ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': asset.cache },
    });
  };

  return {
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === basePath.slice(0, -1) && request.method === 'GET')
        return new Response(null, { status: 308, headers: { location: `${basePath}${url.search}`, ...SECURITY_HEADERS } });
      if (!url.pathname.startsWith(basePath)) return json(404, { error: 'Not found.' });
      const path = url.pathname.slice(basePath.length);
      // The UI's files hold no data: served without authentication (the UI then asks for it).
      if ((request.method === 'GET' || request.method === 'HEAD') && !path.startsWith('api/') && path !== 'metrics') {
        return serveUi(path, request.method);
      }
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
            const target = params.id
              ? `${params.queue}/${params.id}`
              : params.group
                ? `${params.queue}/group:${params.group}`
                : params.queue;
            await admin.recordAudit({
              at: Date.now(),
              who: who.user,
              action: params.op ? `${r.action} ${params.op}` : r.action,
              target,
              detail: JSON.stringify(result).slice(0, 200),
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
