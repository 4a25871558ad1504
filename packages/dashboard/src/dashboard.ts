/**
 * The dashboard's HTTP API, as one Fetch-style handler (`(Request) => Promise<Response>`) that
 * any server can mount under any base path (Node `http`, Express: see `toNodeListener`). It reads
 * and acts through Hopper's `Admin` and Queue APIs. Every request goes through one pipeline
 * (dispatch.ts): hardening checks, authentication, per-caller limits, CSRF and role checks on
 * changes, redaction of every value shown, byte-bounded replies, an audit entry per action.
 */
import { Admin, ErrorCode, hopperErrorCode, type QueueConnection, type Job, type Queue, type QueueOverview } from 'hopper-queue';
import { HttpError, checkAuth, type AuthOptions } from './security.js';
import { invalidOption } from './invalid.js';
import { Redactor, defaultRedact, defaultRedactText, type Redact, type RedactText } from './redaction.js';
import { json, type Params, type Route, type RouteContext, type RouteHandler } from './http.js';
import { readRoutes } from './read-routes.js';
import { actionRoutes } from './action-routes.js';
import { OverviewHub } from './stream.js';
import { metricsRoute } from './metrics-route.js';
import { loadAssets, type Asset } from './static.js';
import { LOOPBACK_HOSTS, checkAllowedHosts, checkAllowedOrigins, proxyHops, type TrustProxy } from './guard.js';
import { Limiter, checkLimits, type DashboardLimits } from './limits.js';
import { AuditTrail } from './audit.js';
import { logError, streamErrorMessage, type ErrorHook } from './errors.js';
import { handle, type ConnectionInfo } from './dispatch.js';
import { SECURITY_HEADERS } from './security.js';

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** How to reach Redis (as for a Queue). */
  connection?: QueueConnection;
  /** The key prefix of the queues (default `hopper`). */
  prefix?: string;
  /** Where the dashboard is mounted (default `/`): its API is under `<basePath>api/`. */
  basePath?: string;
  /** Authentication: required (see AuthOptions; `false` turns it off explicitly). */
  auth: AuthOptions;
  /**
   * Hides values in every reply, search, stream and audit entry (default {@link defaultRedact}:
   * values of password-, secret-, token-, key-, cookie-, connection-string-, JWT- and session-like fields).
   */
  redact?: Redact;
  /** Redacts free text: failed reasons, stack traces, logs, text output (default {@link defaultRedactText}, best effort). */
  redactText?: RedactText;
  /**
   * Host names the dashboard answers to (the `Host` header, or `X-Forwarded-Host` behind a trusted
   * proxy); any other is a 400. This is the defence against DNS rebinding. `.example.com` accepts
   * its subdomains, `*` any host. Default: any host, except with `auth: false`, where only
   * loopback names (`localhost`, `*.localhost`, `127.0.0.1`, `[::1]`) are accepted.
   */
  allowedHosts?: string[];
  /**
   * Origins (`https://ops.example.com`) whose changes are accepted besides the request's own
   * (the CSRF defence compares the browser's `Origin` with them). Default: none.
   */
  allowedOrigins?: string[];
  /**
   * The dashboard runs behind this many reverse proxies (true: one) whose `X-Forwarded-Proto`,
   * `X-Forwarded-Host` and `X-Forwarded-For` are believed: the request's own origin is then
   * `https://<public host>` (so a browser's changes behind an HTTPS-terminating proxy are accepted)
   * and the client's address is the one the proxy saw (for the sign-in lockout). Default: false.
   * Only set it when every request comes through those proxies: a client could send the headers itself.
   */
  trustProxy?: TrustProxy;
  /** Byte, request, stream and sign-in limits (see DashboardLimits for each default). */
  limits?: Partial<DashboardLimits>;
  /** How often the live stream sends the overview (ms, default 2,000). */
  streamIntervalMs?: number;
  /** How often an open live stream checks its caller's credentials again (ms, default 30,000): a revoked session ends it. */
  streamRecheckMs?: number;
  /**
   * How long the list of queue names is reused before it is listed again in the background (ms,
   * default 30,000). Listing scans the keyspace (seconds with a million jobs); counts are always fresh.
   */
  queueListTtlMs?: number;
  /** Where unexpected errors are reported (default: the server's stderr); their reply names only a reference. */
  onError?: ErrorHook;
}

/** A mounted dashboard: its handler, its limits, and `close()` for the connections it opened. */
export interface Dashboard {
  /**
   * Handles one request (a Response for every request: 404 outside the base path, 400 for a
   * malformed or disallowed one; it never throws). `info.clientAddress` is the peer's address,
   * for the sign-in lockout (toNodeListener passes it; a Fetch server can pass its own).
   */
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /** The limits in force (the defaults with the options' changes). */
  readonly limits: Readonly<DashboardLimits>;
  /** Closes the dashboard's Redis connections and ends its live streams. */
  close(): Promise<void>;
}

function positiveMs(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 10 || value > 86_400_000)
    throw invalidOption(`${name} must be a whole number of milliseconds from 10 to 86,400,000, not ${String(value)}.`);
  return value;
}

/**
 * Creates the dashboard's handler.
 *
 * @throws InvalidOptionsError without an `auth` setting (secure by default) or with a bad option.
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const auth = checkAuth(options.auth);
  if (options.redact !== undefined && typeof options.redact !== 'function') throw invalidOption('redact must be a function.');
  if (options.redactText !== undefined && typeof options.redactText !== 'function') throw invalidOption('redactText must be a function.');
  const redactor = new Redactor(options.redact ?? defaultRedact, options.redactText ?? defaultRedactText);
  const basePath = (options.basePath ?? '/').replace(/\/?$/, '/');
  if (!basePath.startsWith('/')) throw invalidOption(`basePath must start with "/", not "${basePath}".`);
  const limits = checkLimits(options.limits);
  const guard = {
    allowedHosts:
      options.allowedHosts !== undefined ? checkAllowedHosts(options.allowedHosts) : auth === false ? [...LOOPBACK_HOSTS] : null,
    allowedOrigins: checkAllowedOrigins(options.allowedOrigins ?? []),
    trustProxy: proxyHops(options.trustProxy),
  };
  const interval = positiveMs(options.streamIntervalMs, 2_000, 'streamIntervalMs');
  const streamRecheckMs = positiveMs(options.streamRecheckMs, 30_000, 'streamRecheckMs');
  const onError = options.onError ?? logError;
  const admin = new Admin({ connection: options.connection, prefix: options.prefix });
  const streams = new Set<() => void>();

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
      if (hopperErrorCode(error) === ErrorCode.QueueNotFound || hopperErrorCode(error) === ErrorCode.InvalidName)
        throw new HttpError(404, (error as Error).message);
      throw error;
    }
  };
  const jobOf = async (queue: Queue, id: string): Promise<Job> => {
    const job = await queue.getJob(id);
    if (!job) throw new HttpError(404, `No job "${id}" in queue "${queue.name}".`);
    return job;
  };

  const routes: Route[] = [];
  const route = (method: Route['method'], path: string, handler: RouteHandler, action?: string): void => {
    const names: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_m, name: string) => (names.push(name), '([^/]+)'))}$`);
    routes.push({ method, pattern, names, handler, action });
  };
  const context: RouteContext = { admin, redactor, limits, overview, queueOf, jobOf };
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

  const hub = new OverviewHub(overview, interval, (error) => {
    const message = streamErrorMessage(error);
    if (message.includes('server log')) onError(error, { method: 'GET', path: `${basePath}api/stream`, ref: 'stream' });
    return message;
  });
  const pipeline = {
    auth,
    guard,
    basePath,
    limiter: new Limiter(limits),
    routes,
    audit: new AuditTrail(admin, redactor),
    admin,
    hub,
    streams,
    streamRecheckMs,
    onError,
    serveUi,
    metrics: metricsRoute(admin),
  };

  return {
    limits: Object.freeze({ ...limits }),
    fetch: (request, info) => handle(pipeline, request, info),
    async close() {
      for (const stop of [...streams]) stop();
      hub.close();
      await admin.close();
    },
  };
}
