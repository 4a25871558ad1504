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

/** One mount under test. */
export interface Mount {
  kind: MountKind;
  /** The base path the dashboard is mounted at (`/hopper/`). */
  basePath: string;
  /** `host[:port]` of the server (what a browser puts in Host). */
  host: string;
  send(req: RawRequest): Promise<RawResponse | 'unsupported'>;
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
    return { kind, basePath, host, send: (req) => sendRaw(port, req), close: () => s.stop() };
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
