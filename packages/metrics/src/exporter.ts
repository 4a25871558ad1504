/**
 * The `/metrics` exporter: a Node request listener (and a Fetch-style handler) that serves a
 * registry's metrics, and a small server for `hopper metrics --port`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { HopperMetrics, invalid, type HopperMetricsOptions } from './collector.js';

/** A Fetch-style handler serving `registry`'s metrics (GET or HEAD; any path: mount it where you want). */
export function metricsFetchHandler(registry: Registry): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response('Method not allowed: GET /metrics\n', { status: 405, headers: { allow: 'GET, HEAD' } });
    }
    try {
      const body = await registry.metrics();
      return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers: { 'content-type': registry.contentType } });
    } catch (err) {
      return new Response(`Reading the metrics failed: ${(err as Error).message}\n`, {
        status: 503,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      });
    }
  };
}

/**
 * A Node request listener serving `registry`'s metrics on `path` (default `/metrics`; 404
 * elsewhere). A reading that fails (Redis unreachable) answers 503 with the reason.
 *
 * @example http.createServer(metricsHandler(metrics.registry)).listen(9464);
 */
export function metricsHandler(registry: Registry, path = '/metrics'): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = metricsFetchHandler(registry);
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`Not found: the metrics are at ${path}\n`);
      return;
    }
    handle(new Request(`http://localhost${path}`, { method: req.method })).then(
      async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(await response.text());
      },
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  };
}

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions extends HopperMetricsOptions {
  /** The port (0: any free one). */
  port: number;
  /** The interface to listen on. Default `127.0.0.1` (loopback: the metrics name your queues and job names). */
  host?: string;
  /** Where to serve. Default `/metrics`. */
  path?: string;
}

/** A running metrics server. */
export interface MetricsServer {
  /** `http://host:port/metrics`. */
  url: string;
  server: Server;
  metrics: HopperMetrics;
  /** Stops listening and closes the connections it opened. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP server that serves Hopper's metrics (what `hopper metrics --port` runs).
 *
 * @example const { url, close } = await startMetricsServer({ port: 9464, connection: process.env.REDIS_URL });
 */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  if (typeof opts !== 'object' || opts === null) throw invalid(`startMetricsServer options must be an object, got ${String(opts)}.`);
  const { port, host: hostOption, path: pathOption, ...collectorOptions } = opts;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw invalid(`port must be an integer from 0 to 65535 (0: any free port), got ${String(port)}.`);
  }
  if (hostOption !== undefined && (typeof hostOption !== 'string' || hostOption === '')) {
    throw invalid(`host must be a non-empty string (an interface to listen on), got ${String(hostOption)}.`);
  }
  if (pathOption !== undefined && (typeof pathOption !== 'string' || !pathOption.startsWith('/'))) {
    throw invalid(`path must start with "/", got ${String(pathOption)}.`);
  }
  const metrics = new HopperMetrics(collectorOptions);
  const path = pathOption ?? '/metrics';
  const server = createServer(metricsHandler(metrics.registry, path));
  const host = hostOption ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    await metrics.close();
    throw err;
  }
  const { port: bound } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}${path}`,
    server,
    metrics,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await metrics.close();
    },
  };
}
