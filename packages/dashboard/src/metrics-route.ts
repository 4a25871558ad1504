/**
 * The dashboard's `/metrics` route: Hopper's Prometheus metrics (hopper-queue-metrics) read through
 * the dashboard's own Admin, behind its authentication (any role: a `viewer` token is enough for
 * a Prometheus scrape job, e.g. `authorization: { credentials: <token> }`).
 */
import type { Admin } from 'hopper-queue';
import { HopperMetrics, metricsFetchHandler } from 'hopper-queue-metrics';
import { SECURITY_HEADERS } from './security.js';

/** Serves the metrics of every queue under the Admin's prefix (the collector is made on first use). */
export function metricsRoute(admin: Admin): (request: Request) => Promise<Response> {
  let handle: ((request: Request) => Promise<Response>) | undefined;
  return async (request) => {
    handle ??= metricsFetchHandler(new HopperMetrics({ admin }).registry);
    const response = await handle(request);
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) headers.set(name, value);
    return new Response(response.body, { status: response.status, headers });
  };
}
