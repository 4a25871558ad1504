/** The dashboard's /metrics route: Prometheus text behind the dashboard's authentication, a viewer token is enough. */
import { describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { createDashboard } from '../src/index.js';

const env = useHopper();

describe('dashboard /metrics', () => {
  it("serves Hopper's metrics to a viewer, refuses an anonymous caller, and only on GET", async () => {
    const name = env.queueName();
    await env.queue(name).add('x', {});
    const dashboard = createDashboard({
      connection: env.url,
      prefix: env.prefix,
      basePath: '/hopper/',
      auth: { tokens: [{ token: 'viewer-token-0123456789ab', role: 'viewer', name: 'prometheus' }] },
    });
    try {
      const anonymous = await dashboard.fetch(new Request('http://localhost/hopper/metrics'));
      expect(anonymous.status).toBe(401);
      const res = await dashboard.fetch(
        new Request('http://localhost/hopper/metrics', { headers: { authorization: 'Bearer viewer-token-0123456789ab' } }),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toContain(`hopper_queue_jobs{queue="${name}",state="waiting"} 1`);
      const post = await dashboard.fetch(
        new Request('http://localhost/hopper/metrics', {
          method: 'POST',
          headers: { authorization: 'Bearer viewer-token-0123456789ab' },
        }),
      );
      expect(post.status).toBe(404);
    } finally {
      await dashboard.close();
    }
  });
});
