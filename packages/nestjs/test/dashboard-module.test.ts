/** HopperDashboardModule: the dashboard served by a Nest application, behind the application's guard. */
import 'reflect-metadata';
import { Injectable, Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useHopper } from '../../hopper/test/helpers/hopper.js';
import { HopperDashboardModule } from '../src/index.js';

const env = useHopper();
const TOKEN = 'dashboard-token-0123456789';

@Injectable()
class TeamGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-team'] === 'ops';
  }
}

describe('HopperDashboardModule', () => {
  it('serves the dashboard API under its path, behind the guard and the dashboard auth', async () => {
    const name = env.queueName('mail');
    await env.queue(name).add('welcome', { to: 'a@x' });
    @Module({
      imports: [
        HopperDashboardModule.forRoot({
          path: 'admin/hopper',
          connection: env.url,
          prefix: env.prefix,
          auth: { tokens: [{ token: TOKEN }] },
          guards: [TeamGuard],
        }),
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app: INestApplication = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const port = ((app.getHttpServer() as Server).address() as AddressInfo).port;
      const url = `http://127.0.0.1:${port}/admin/hopper/api`;
      const headers = { authorization: `Bearer ${TOKEN}`, 'x-team': 'ops' };
      expect((await fetch(`${url}/queues`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(403); // the guard
      expect((await fetch(`${url}/queues`, { headers: { 'x-team': 'ops' } })).status).toBe(401); // the dashboard's auth
      const ok = await fetch(`${url}/queues`, { headers });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { name: string }[]).map((q) => q.name)).toEqual([name]);
      // A mutation through Nest's body parser still reaches the dashboard.
      const paused = await fetch(`${url}/queues/${name}/pause`, {
        method: 'POST',
        headers: { ...headers, 'x-hopper-csrf': '1', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(paused.status, await paused.clone().text()).toBe(200);
      expect(await env.queue(name).isPaused()).toBe(true);
    } finally {
      await app.close();
    }
  });
});
