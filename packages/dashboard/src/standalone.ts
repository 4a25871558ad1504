/**
 * `hopper-dashboard`: the dashboard as its own server. Listens on 127.0.0.1 unless told
 * otherwise; without `--token` it generates one and prints it (authentication is never off
 * unless `--no-auth` says so).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createDashboard } from './dashboard.js';
import { toNodeListener } from './node.js';

const USAGE = `Usage: hopper-dashboard [--redis <url>] [--prefix hopper] [--host 127.0.0.1] [--port 3000] [--base-path /] [--token <t> | --no-auth]`;

/** Runs the standalone server; resolves once it listens, with a function that stops it. */
export async function runStandalone(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string; token?: string; stop(): Promise<void> }> {
  const { values } = parseArgs({
    args: argv,
    options: {
      redis: { type: 'string' },
      prefix: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'base-path': { type: 'string' },
      token: { type: 'string' },
      'no-auth': { type: 'boolean' },
    },
    strict: true,
  });
  const port = Number(values.port ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new TypeError(`--port must be a port number, not "${values.port}". ${USAGE}`);
  if (values.token !== undefined && values['no-auth']) throw new TypeError(`--token and --no-auth contradict each other. ${USAGE}`);
  const token = values['no-auth'] ? undefined : (values.token ?? env.HOPPER_DASHBOARD_TOKEN ?? randomBytes(24).toString('base64url'));
  const dashboard = createDashboard({
    connection: values.redis ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: values.prefix ?? 'hopper',
    basePath: values['base-path'] ?? '/',
    auth: token === undefined ? false : { tokens: [{ token, name: 'standalone token' }] },
  });
  const server = createServer(toNodeListener(dashboard));
  const host = values.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host}:${actualPort}${values['base-path'] ?? '/'}`,
    token,
    async stop() {
      await dashboard.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
