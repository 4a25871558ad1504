/**
 * A scrape answers within its bound whatever Redis does (issue 34): against an unresponsive Redis
 * it never answered, against a refused port after 10.7 s (past Prometheus's 10 s default scrape
 * timeout). Now it answers by scrapeTimeoutMs (default 5 s) with what was read and
 * `hopper_scrape_error 1`. And a second HopperMetrics on one registry is refused with a typed
 * error before it opens any connection (it threw prom-client's untyped error and leaked one).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError } from 'hopper-queue';
import { freePort } from '../../hopper/test/helpers/redis-server.js';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { HopperMetrics } from '../src/index.js';

const env = useHopper();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A TCP server that accepts connections and never answers; counts the connections made to it. */
async function silentServer(): Promise<{ port: number; connections: () => number }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => count };
}

function track(metrics: HopperMetrics): HopperMetrics {
  closers.push(() => metrics.close());
  return metrics;
}

async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await promise;
  return { value, ms: performance.now() - started };
}

describe('scrape bounds', () => {
  it('an unresponsive Redis: the scrape answers by scrapeTimeoutMs with hopper_scrape_error 1', async () => {
    const { port } = await silentServer();
    const metrics = track(new HopperMetrics({ connection: { host: '127.0.0.1', port }, scrapeTimeoutMs: 300 }));
    const { value: text, ms } = await timed(metrics.metrics());
    expect(ms).toBeLessThan(1_500);
    expect(text).toMatch(/^hopper_scrape_error 1$/m);
  });

  it('a refused port: answered under the default scrapeTimeoutMs (5 s, below Prometheus’s 10 s)', async () => {
    const metrics = track(new HopperMetrics({ connection: { host: '127.0.0.1', port: await freePort() } }));
    const { value: text, ms } = await timed(metrics.metrics());
    expect(ms).toBeLessThan(6_000);
    expect(text).toMatch(/^hopper_scrape_error 1$/m);
  });

  it('a healthy Redis: hopper_scrape_error 0 beside the queues read', async () => {
    const name = env.queueName();
    await env.queue(name).add('x', {});
    const metrics = track(new HopperMetrics({ connection: env.url, prefix: env.prefix }));
    const text = await metrics.metrics();
    expect(text).toMatch(/^hopper_scrape_error 0$/m);
    expect(text).toContain(`hopper_queue_jobs{queue="${name}",state="waiting"} 1`);
  });

  it('a second HopperMetrics on one registry: a typed error, and no connection opened', async () => {
    const registry = new Registry();
    track(new HopperMetrics({ connection: env.url, prefix: env.prefix, registry }));
    const silent = await silentServer();
    expect(() => new HopperMetrics({ connection: { host: '127.0.0.1', port: silent.port }, registry })).toThrow(InvalidOptionsError);
    expect(() => new HopperMetrics({ connection: { host: '127.0.0.1', port: silent.port }, registry })).toThrow(
      /already has a metric named hopper_/,
    );
    // A connection would have been made by now (the constructor starts connecting at once).
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
    expect(silent.connections()).toBe(0);
    // Another prefix is accepted.
    track(new HopperMetrics({ connection: env.url, prefix: env.prefix, registry, metricPrefix: 'other_' }));
  });
});
