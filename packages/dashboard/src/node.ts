/**
 * Mounting the dashboard on Node's `http` server, or in Express (`app.use('/hopper', listener)`):
 * turns Node's request into a Fetch Request and streams the Response back. A client that goes
 * away aborts the request (ending a live stream).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dashboard } from './dashboard.js';

/** A Node (and Express) request listener for `dashboard`. In Express, mount it under the same path as its `basePath`. */
export function toNodeListener(dashboard: Dashboard): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const host = req.headers.host ?? '127.0.0.1';
    // Express strips its mount path into req.url; originalUrl keeps it.
    const path = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    // A framework's body parser (express.json(), NestJS) may have read the body already.
    const parsed = (req as IncomingMessage & { body?: unknown }).body;
    const body =
      typeof parsed === 'string' || Buffer.isBuffer(parsed)
        ? parsed
        : parsed !== undefined && parsed !== null
          ? JSON.stringify(parsed)
          : req.readableEnded || req.readableDidRead
            ? '' // read by a body parser that kept nothing
            : (Readable.toWeb(req) as ReadableStream);
    const request = new Request(`http://${host}${path}`, {
      method: req.method,
      headers,
      signal: controller.signal,
      ...(hasBody ? { body, duplex: 'half' } : {}),
    });
    dashboard
      .fetch(request)
      .then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (!response.body) return res.end();
        // Node's web streams are async iterable.
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
        res.end();
      })
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
      });
  };
}
