/**
 * Mounting the dashboard on Node's `http` (or `https`) server, or in Express
 * (`app.use('/hopper', listener)`): turns Node's request into a Fetch Request and streams the
 * Response back, honouring the client's pace. Nothing a client sends can make it throw: a request
 * whose target or `Host` cannot be a URL (`OPTIONS *`, `GET http://...`, `Host: a b`,
 * `Host: x:99999`) is answered 400 before the dashboard sees it, and any later failure is a reply
 * (no stack trace, no path). A client that goes away aborts the request (ending a live stream).
 */
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dashboard } from './dashboard.js';
import { parseHost } from './guard.js';
import { SECURITY_HEADERS } from './security.js';

/** Writes a small JSON error (used before a Request exists, or when everything else failed). */
function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: message });
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}

/** The request's body as a web stream, failing past `max` bytes without buffering them (the dashboard answers 413). */
function boundedBody(req: IncomingMessage, max: number): ReadableStream<Uint8Array> {
  // destroyOnReturn false: stopping early leaves the socket to the reply (Node drains or closes it).
  const source = req.iterator({ destroyOnReturn: false });
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = (await source.next()) as IteratorResult<Buffer>;
        if (next.done) return controller.close();
        const chunk = next.value;
        total += chunk.byteLength;
        // One byte past the limit is enough for the reader to know; nothing more is read.
        if (total > max) {
          controller.enqueue(new Uint8Array(chunk.subarray(0, chunk.byteLength - (total - max - 1))));
          return controller.close();
        }
        controller.enqueue(new Uint8Array(chunk));
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      await source.return?.();
    },
  });
}

/** What a framework's body parser left on the request (express.json(), NestJS), if it read the body. */
function parsedBody(req: IncomingMessage): string | Buffer | undefined {
  const parsed = (req as IncomingMessage & { body?: unknown }).body;
  if (typeof parsed === 'string' || Buffer.isBuffer(parsed)) return parsed;
  if (parsed !== undefined && parsed !== null) return JSON.stringify(parsed);
  if (req.readableEnded || req.readableDidRead) return ''; // read by a body parser that kept nothing
  return undefined;
}

/** A Node (and Express) request listener for `dashboard`. In Express, mount it under the same path as its `basePath`. */
export function toNodeListener(dashboard: Dashboard): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serve(dashboard, req, res).catch(() => fail(res, 500, 'Internal error.'));
  };
}

async function serve(dashboard: Dashboard, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Express strips its mount path into req.url; originalUrl keeps it.
  const target = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '';
  // Only origin-form targets (`/path?query`): not `*`, not absolute-form (a proxy's request).
  if (!target.startsWith('/')) return fail(res, 400, 'Bad request: the request target must be a path.');
  const rawHost = req.headers.host;
  if (rawHost === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1)
    return fail(res, 400, 'Bad request: the Host header is missing.');
  const host = parseHost(rawHost ?? 'localhost');
  if (!host) return fail(res, 400, 'Bad request: the Host is not a valid host name.');
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    try {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    } catch {
      return fail(res, 400, 'Bad request: a header value is not valid.');
    }
  }
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const body = hasBody ? (parsedBody(req) ?? boundedBody(req, dashboard.limits.maxBodyBytes)) : undefined;
  let request: Request;
  try {
    request = new Request(`${scheme}://${host.hostname}${host.port ? `:${host.port}` : ''}${target}`, {
      method: req.method,
      headers,
      signal: controller.signal,
      ...(body !== undefined ? { body, duplex: 'half' } : {}),
    });
  } catch {
    return fail(res, 400, 'Bad request: the request cannot be read.');
  }
  const response = await dashboard.fetch(request, { clientAddress: req.socket.remoteAddress ?? '' });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body || req.method === 'HEAD') {
    res.end();
    return;
  }
  // Node's web streams are async iterable. A slow reader is waited for (drain), so an unread
  // live stream backs up into the dashboard, which ends it, instead of into this process's memory.
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (res.destroyed) break;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
  } finally {
    res.end();
  }
}
