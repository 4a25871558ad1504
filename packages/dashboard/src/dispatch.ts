/**
 * The request pipeline every mount shares, in order: the hardening checks (guard.ts: target, Host
 * allow-list, trusted proxies), the method, the base path and the UI's files, then for the API the
 * sign-in limiter and authentication, the per-caller request cap, the route (its parameters decoded,
 * a malformed one a 400), for a change the CSRF header, the Origin and the role, then the body
 * (bounded in bytes, a JSON object), the handler, the audit entry (done or not), and the reply,
 * bounded in bytes. Every failure goes through errors.ts.
 */
import type { Admin } from 'hopper-queue';
import { Budget } from './bounded.js';
import { describeError, errorReply, type ErrorHook } from './errors.js';
import { checkOrigin, checkRequest, type GuardOptions } from './guard.js';
import { json, type Params, type Route } from './http.js';
import type { Limiter } from './limits.js';
import type { AuditTrail } from './audit.js';
import { HttpError, SECURITY_HEADERS, authenticate, checkCsrfHeader, type AuthOptions, type Caller } from './security.js';
import { overviewStream, type OverviewHub } from './stream.js';

/** What the pipeline works with (built once by createDashboard). */
export interface Pipeline {
  auth: AuthOptions;
  guard: GuardOptions;
  basePath: string;
  limiter: Limiter;
  routes: Route[];
  audit: AuditTrail;
  admin: Admin;
  hub: OverviewHub;
  streams: Set<() => void>;
  streamRecheckMs: number;
  onError: ErrorHook;
  serveUi: (path: string, method: string) => Promise<Response>;
  metrics: (request: Request) => Promise<Response>;
}

/** What a mount knows of the connection that the Request does not say. */
export interface ConnectionInfo {
  /** The client's address (the socket's peer); behind trusted proxies, `X-Forwarded-For` is believed instead. */
  clientAddress?: string;
}

/** Reads a request body of at most `max` bytes (413 beyond, without reading the rest) as UTF-8 text. */
export async function readBody(request: Request, max: number): Promise<string> {
  const declared = request.headers.get('content-length');
  const tooLarge = () => new HttpError(413, `The request body is over ${max} bytes (limits.maxBodyBytes).`, { connection: 'close' });
  if (declared !== null && Number(declared) > max) throw tooLarge();
  if (!request.body) return '';
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch {
      throw new HttpError(400, 'The request body could not be read to its end (did the client go away?).', { connection: 'close' });
    }
    const { value, done } = next;
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new HttpError(400, 'The request body must be UTF-8 text (JSON).');
  }
}

/** A POST's body as a JSON object (`{}` when empty); 400 for anything else. */
function parseBody(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'The request body must be JSON.');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'The request body must be a JSON object ({ ... }), not null, an array or a bare value.');
  return body as Record<string, unknown>;
}

/** Decodes the route's path parameters; a malformed percent-encoding is a 400. */
function paramsOf(route: Route, match: RegExpExecArray): Params {
  const params: Params = {};
  route.names.forEach((name, i) => {
    try {
      params[name] = decodeURIComponent(match[i + 1]);
    } catch {
      throw new HttpError(400, `Bad request: the ${name} in the path is not valid percent-encoding.`);
    }
  });
  return params;
}

/** The audit target of an action: `queue`, `queue/id` or `queue/group:g`. */
function targetOf(params: Params): string {
  return params.id ? `${params.queue}/${params.id}` : params.group ? `${params.queue}/group:${params.group}` : (params.queue ?? '');
}

/** Handles one request (never throws: every failure is a reply). */
export async function handle(p: Pipeline, request: Request, info: ConnectionInfo = {}): Promise<Response> {
  let path = '';
  try {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new HttpError(400, 'Bad request: the URL is not valid.');
    }
    path = url.pathname;
    const checked = checkRequest(url, request.headers, info.clientAddress ?? '', p.guard);
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST')
      throw new HttpError(405, `Method ${method.slice(0, 20)} not allowed: the dashboard answers GET, HEAD and POST.`, {
        allow: 'GET, HEAD, POST',
      });
    const { basePath } = p;
    if (url.pathname === basePath.slice(0, -1) && method === 'GET')
      return new Response(null, { status: 308, headers: { location: `${basePath}${url.search}`, ...SECURITY_HEADERS } });
    if (!url.pathname.startsWith(basePath)) return json(404, { error: 'Not found.' });
    const sub = url.pathname.slice(basePath.length);
    // The UI's files hold no data: served without authentication (the UI then asks for it).
    if ((method === 'GET' || method === 'HEAD') && !sub.startsWith('api/') && sub !== 'metrics') return await p.serveUi(sub, method);
    return await api(p, request, url, sub, checked.origin, checked.clientAddress);
  } catch (error) {
    return errorReply(error, { method: request.method, path }, p.onError);
  }
}

async function signIn(p: Pipeline, request: Request, address: string): Promise<Caller> {
  // A locked-out address is refused before its credentials are even compared.
  if (request.headers.get('authorization') !== null) p.limiter.checkSignIn(address);
  return authenticate(p.auth, request, address, () => p.limiter.failedSignIn(address));
}

async function api(p: Pipeline, request: Request, url: URL, path: string, origin: string, address: string): Promise<Response> {
  const caller = await signIn(p, request, address);
  const who = caller.principal;
  const end = p.limiter.begin(caller.key);
  try {
    if (request.method === 'GET' && path === 'api/stream') {
      const release = p.limiter.openStream(caller.key);
      const recheck = async (): Promise<boolean> => {
        try {
          await authenticate(p.auth, request, address);
          return true;
        } catch {
          return false;
        }
      };
      return overviewStream({ request, hub: p.hub, recheck, recheckMs: p.streamRecheckMs, release, streams: p.streams });
    }
    if (request.method === 'GET' && path === 'metrics') return await p.metrics(request);
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    let known = false;
    for (const r of p.routes) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      known = true;
      if (method !== r.method) continue;
      const params = paramsOf(r, m);
      const budget = new Budget(p.limiter.limits.maxResponseBytes, p.limiter.limits.maxValueBytes);
      let body: Record<string, unknown> = {};
      const audit = async (status: number, detail: unknown): Promise<void> => {
        if (!r.action) return;
        await p.audit.record({
          who: who.user,
          caller: caller.key,
          action: params.op ? `${r.action} ${params.op}` : r.action,
          target: targetOf(params),
          status,
          detail,
          ids: Array.isArray(body.ids)
            ? body.ids
            : Array.isArray((detail as { ids?: unknown } | null)?.ids)
              ? (detail as { ids: unknown[] }).ids
              : undefined,
        });
      };
      let result: unknown;
      try {
        if (r.method === 'POST') {
          checkCsrfHeader(request);
          checkOrigin(request.headers.get('origin'), origin, p.guard.allowedOrigins);
          if (who.role !== 'operator') throw new HttpError(403, `Refused: ${who.user} is a viewer; this action needs the operator role.`);
          body = parseBody(await readBody(request, p.limiter.limits.maxBodyBytes));
        }
        result = await r.handler({ request, url, params, who, body, budget });
      } catch (error) {
        const reply = errorReply(error, { method: request.method, path: url.pathname }, p.onError);
        const d = describeError(error);
        await audit(reply.status, d.unexpected ? 'Internal error (see the server log).' : d.message).catch((e: unknown) =>
          p.onError(e, { method: request.method, path: url.pathname, ref: 'audit' }),
        );
        return reply;
      }
      await audit(200, result);
      // Routes that show job content bound their reply as they build it; the others (the overview
      // of many queues, groups, a preview) are bounded here.
      const final = new Budget(p.limiter.limits.maxResponseBytes, p.limiter.limits.maxResponseBytes);
      const bounded = budget.used ? result : final.fit(result, Number.POSITIVE_INFINITY);
      const cuts = budget.cuts + final.cuts;
      const reply = json(200, bounded, cuts > 0 ? { 'x-hopper-cut': String(cuts) } : {});
      return request.method === 'HEAD' ? new Response(null, { status: 200, headers: reply.headers }) : reply;
    }
    if (known) throw new HttpError(405, `Method ${request.method} not allowed here.`, { allow: 'GET, HEAD, POST' });
    throw new HttpError(404, 'Not found.');
  } finally {
    end();
  }
}
