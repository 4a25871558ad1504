/**
 * Mounting the dashboard in Fastify (4 and 5): a plugin to register under a prefix equal to the
 * dashboard's base path. The plugin keeps request bodies unread (its own catch-all content-type
 * parser, scoped to the plugin) and hands Node's request and response to {@link toNodeListener}.
 *
 * @example
 * const dashboard = createDashboard({ connection, basePath: '/hopper/', auth: { tokens: [{ token }] } });
 * await app.register(fastifyDashboard(dashboard), { prefix: '/hopper' });
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dashboard } from './dashboard.js';
import { toNodeListener } from './node.js';

/** What the plugin uses of a Fastify instance (structural, so this package does not depend on Fastify). */
interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    fn: (request: unknown, payload: unknown, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: string[];
    url: string;
    handler: (request: { raw: IncomingMessage }, reply: { raw: ServerResponse; hijack(): void }) => void;
  }): void;
}

/** A Fastify plugin serving `dashboard` (UI and API); register it with `{ prefix }` = the base path without its trailing slash. */
export function fastifyDashboard(dashboard: Dashboard): (app: FastifyLike) => Promise<void> {
  const listener = toNodeListener(dashboard);
  return async (app) => {
    // Leave the body to the dashboard (it reads the raw stream).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const handler = (request: { raw: IncomingMessage }, reply: { raw: ServerResponse; hijack(): void }): void => {
      reply.hijack();
      listener(request.raw, reply.raw);
    };
    const method = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];
    app.route({ method, url: '/', handler });
    app.route({ method, url: '/*', handler });
  };
}
