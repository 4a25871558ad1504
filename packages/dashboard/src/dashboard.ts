/**
 * The dashboard's HTTP API, as one Fetch-style handler (`(Request) => Promise<Response>`) that
 * any server can mount under any base path (Node `http`, Express: see `toNodeListener`). It reads
 * and acts through Hopper's `Admin` and Queue APIs; every route is authenticated, every mutation
 * CSRF-checked, audited and role-checked, every reply JSON (job content is never rendered as
 * HTML) with secrets redacted; `metrics` serves Prometheus text (metrics-route.ts).
 */
import { Admin, ErrorCode, hopperErrorCode, type ConnectionOptions, type Job, type Queue, type QueueOverview } from 'hopper-queue';
import {
  HttpError,
  SECURITY_HEADERS,
  authenticate,
  checkAuth,
  checkCsrf,
  defaultRedact,
  type AuthOptions,
  type Redact,
} from './security.js';
import { json, type Params, type Route, type RouteContext, type RouteHandler } from './http.js';
import { readRoutes } from './read-routes.js';
import { actionRoutes } from './action-routes.js';
import { overviewStream } from './stream.js';
import { metricsRoute } from './metrics-route.js';
import { loadAssets, type Asset } from './static.js';

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
  const context: RouteContext = { admin, redact, overview, queueOf, jobOf };
  readRoutes(route, context);
  actionRoutes(route, context);

  let assets: Promise<Map<string, Asset> | null> | undefined;
  const serveUi = async (path: string, method: string): Promise<Response> => {
    assets ??= loadAssets();
    const files = await assets;
    if (!files)
      return json(404, { error: 'The web UI is not built: run `npm run build -w hopper-queue-dashboard`. The API is under api/.' });
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
        if (request.method === 'GET' && path === 'api/stream') return overviewStream(request, overview, interval, streams);
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
