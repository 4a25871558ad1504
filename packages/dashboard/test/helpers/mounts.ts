/**
 * The dashboard on each kind of mount, driven with raw requests (any method, target, `Host` and
 * header a client can send, which `fetch` cannot): Node `http` (toNodeListener), Express,
 * Fastify (plugin), the Fetch handler itself, and the standalone server. Each mount answers the
 * same `send`; the Fetch handler reports the requests no Fetch server could hand it (an invalid
 * `Host` or target: the server refuses those before any handler runs) as `unsupported`.
 */
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { createDashboard, fastifyDashboard, toNodeListener, type Dashboard, type DashboardOptions } from '../../src/index.js';
import { runStandalone } from '../../src/standalone.js';

/** A request as a client writes it. */
export interface RawRequest {
  method?: string;
  /** The request target as sent: a path, `*`, or an absolute URL. */
  target: string;
  /** Headers as sent (`host` included; a missing `host` is the mount's own address). */
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A response as received. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json(): unknown;
}

/** An open live stream (Server-Sent Events) as a client reads it. */
export interface OpenStream {
  status: number;
  headers: Record<string, string>;
  /** The next event's name (`overview`, `error`, `end`), or null once the server ended the stream. */
  next(): Promise<string | null>;
  /** Goes away (as a client closing its tab). */
  close(): void;
  /** Everything received so far, as text. */
  received(): string;
}

/** Reads SSE blocks from text chunks: calls `push` with each event name, `end` at the end. */
function sseReader(): { feed(text: string): void; end(): void; next(): Promise<string | null>; received(): string } {
  const events: (string | null)[] = [];
  const waiting: ((e: string | null) => void)[] = [];
  let buffer = '';
  let all = '';
  const push = (e: string | null): void => {
    const w = waiting.shift();
    if (w) w(e);
    else events.push(e);
  };
  return {
    received: () => all,
    feed(text) {
      all += text;
      buffer += text;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const name = /^event: (.+)$/m.exec(block)?.[1];
        if (name) push(name);
      }
    },
    end: () => push(null),
    next: () => (events.length > 0 ? Promise.resolve(events.shift()!) : new Promise((resolve) => waiting.push(resolve))),
  };
}

/** Opens `api/stream` on a listening server. */
export function openStreamRaw(port: number, path: string, headers: Record<string, string>): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false }, (res) => {
      const reader = sseReader();
      res.setEncoding('utf8');
      res.on('data', (t: string) => reader.feed(t));
      res.on('end', () => reader.end());
      res.on('close', () => reader.end());
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') flat[k] = v;
      resolve({
        status: res.statusCode ?? 0,
        headers: flat,
        next: () => reader.next(),
        close: () => r.destroy(),
        received: () => reader.received(),
      });
    });
    r.on('error', (e) => reject(e));
    r.end();
  });
}

/** One mount under test. */
export interface Mount {
  kind: MountKind;
  /** The base path the dashboard is mounted at (`/hopper/`). */
  basePath: string;
  /** `host[:port]` of the server (what a browser puts in Host). */
  host: string;
  send(req: RawRequest): Promise<RawResponse | 'unsupported'>;
  /** Opens the live stream with these headers (`host` defaults to the mount's). */
  stream(headers: Record<string, string>): Promise<OpenStream>;
  /** The dashboard object (for the in-process mounts; undefined for the standalone server). */
  dashboard?: Dashboard;
  close(): Promise<void>;
}

export type MountKind = 'node' | 'express' | 'fastify' | 'fetch' | 'standalone';
export const MOUNT_KINDS: readonly MountKind[] = ['node', 'express', 'fastify', 'fetch', 'standalone'];

const response = (status: number, headers: Record<string, string>, text: string): RawResponse => ({
  status,
  headers,
  text,
  json: () => JSON.parse(text) as unknown,
});

/** Sends a raw request to a listening server (Node's client: any target and Host). */
export function sendRaw(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, connection: 'close', ...req.headers };
    // Node's client frames a DELETE's body with neither length nor chunks: say its length.
    if (req.body !== undefined && !('transfer-encoding' in headers)) headers['content-length'] = String(Buffer.byteLength(req.body));
    const r = httpRequest(
      { host: '127.0.0.1', port, method: req.method ?? 'GET', path: req.target, headers, setHost: false, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve(response(res.statusCode ?? 0, flat, Buffer.concat(chunks).toString('utf8')));
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.setTimeout(20_000, () => r.destroy(new Error(`no reply to ${req.method ?? 'GET'} ${req.target} within 20 s`)));
    r.end(req.body);
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * Starts the dashboard (`options`) on mount `kind` under `/hopper/`. The standalone server takes
 * its own flags instead (`standaloneArgs`; it runs with `--token <token>` unless they say otherwise).
 */
export async function mount(kind: MountKind, options: Omit<DashboardOptions, 'basePath'>, standaloneArgs: string[] = []): Promise<Mount> {
  const basePath = '/hopper/';
  if (kind === 'standalone') {
    const s = await runStandalone(['--port', '0', '--base-path', basePath, '--prefix', options.prefix ?? 'hopper', ...standaloneArgs], {
      REDIS_URL: options.connection as string,
      HOPPER_DASHBOARD_TOKEN: tokenOf(options),
    });
    const port = Number(new URL(s.url).port);
    const host = `127.0.0.1:${port}`;
    return {
      kind,
      basePath,
      host,
      send: (req) => sendRaw(port, req),
      stream: (headers) => openStreamRaw(port, `${basePath}api/stream`, headers),
      close: () => s.stop(),
    };
  }
  const dashboard = createDashboard({ ...options, basePath });
  if (kind === 'fetch') {
    return {
      kind,
      basePath,
      host: 'dashboard.test',
      dashboard,
      async send(req) {
        const host = req.headers?.host ?? 'dashboard.test';
        let url: URL;
        try {
          if (!req.target.startsWith('/')) return 'unsupported';
          url = new URL(`http://${host}${req.target}`);
          if (url.host !== host.toLowerCase()) return 'unsupported'; // a Fetch server never builds this URL
        } catch {
          return 'unsupported';
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers ?? {})) if (k !== 'host') headers.set(k, v);
        const method = req.method ?? 'GET';
        const res = await dashboard.fetch(
          new Request(url, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : req.body }),
          { clientAddress: '127.0.0.1' },
        );
        const flat: Record<string, string> = {};
        res.headers.forEach((v, k) => (flat[k] = v));
        return response(res.status, flat, await res.text());
      },
      async stream(headers) {
        const controller = new AbortController();
        const res = await dashboard.fetch(
          new Request(`http://dashboard.test${basePath}api/stream`, { headers: { ...headers }, signal: controller.signal }),
          { clientAddress: '127.0.0.1' },
        );
        const reader = sseReader();
        const flat: Record<string, string> = {};
        res.headers.forEach((v, k) => (flat[k] = v));
        if (res.body) {
          const body = res.body.pipeThrough(new TextDecoderStream()).getReader();
          void (async () => {
            try {
              for (;;) {
                const { value, done } = await body.read();
                if (done) break;
                reader.feed(value);
              }
            } catch {
              // aborted
            }
            reader.end();
          })();
        } else reader.end();
        return {
          status: res.status,
          headers: flat,
          next: () => reader.next(),
          close: () => controller.abort(),
          received: () => reader.received(),
        };
      },
      close: () => dashboard.close(),
    };
  }
  let server: Server;
  let closeApp: () => Promise<void> = async () => undefined;
  if (kind === 'node') server = createServer(toNodeListener(dashboard));
  else if (kind === 'express') {
    const app = express();
    app.use('/hopper', toNodeListener(dashboard));
    server = createServer(app);
  } else {
    const app = Fastify();
    await app.register(fastifyDashboard(dashboard), { prefix: '/hopper' });
    await app.ready();
    server = app.server;
    closeApp = () => app.close();
  }
  const port = await listen(server);
  return {
    kind,
    basePath,
    host: `127.0.0.1:${port}`,
    dashboard,
    send: (req) => sendRaw(port, req),
    stream: (headers) => openStreamRaw(port, `${basePath}api/stream`, headers),
    async close() {
      await closeApp();
      if (server.listening) await closeServer(server);
      await dashboard.close();
    },
  };
}

function tokenOf(options: Omit<DashboardOptions, 'basePath'>): string {
  const auth = options.auth;
  return auth && 'tokens' in auth ? auth.tokens[0].token : 'standalone-token-0123456789';
}
