/**
 * `hopper-dashboard`: the dashboard as its own server. Listens on 127.0.0.1 unless told
 * otherwise; without `--token` it generates one and prints it (authentication is never off
 * unless `--no-auth` says so). It answers only to loopback host names (and the `--host` it listens
 * on) unless `--allowed-host` names others: a web page that rebinds its own name to this machine
 * (DNS rebinding) is refused.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { invalidOption } from './invalid.js';
import { createDashboard } from './dashboard.js';
import { LOOPBACK_HOSTS, checkAllowedHosts } from './guard.js';
import { toNodeListener } from './node.js';

const USAGE =
  'Usage: hopper-dashboard [--redis <url>] [--prefix hopper] [--host 127.0.0.1] [--port 3000] [--base-path /] ' +
  '[--token <t> | --no-auth] [--allowed-host <name>]... [--allowed-origin <origin>]... [--trust-proxy <hops>]';

/** Host names the standalone server answers to: loopback names, the `--host` it listens on (a specific one), and `--allowed-host`s. */
export function standaloneHosts(listenHost: string, allowed: string[]): string[] {
  const hosts = [...LOOPBACK_HOSTS];
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '';
  if (!wildcard) hosts.push(isIP(listenHost) === 6 ? `[${listenHost}]` : listenHost);
  return checkAllowedHosts([...hosts, ...allowed], '--allowed-host');
}

/** Runs the standalone server; resolves once it listens, with a function that stops it. */
export async function runStandalone(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string; token?: string; stop(): Promise<void> }> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        redis: { type: 'string' },
        prefix: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        'base-path': { type: 'string' },
        token: { type: 'string' },
        'no-auth': { type: 'boolean' },
        'allowed-host': { type: 'string', multiple: true },
        'allowed-origin': { type: 'string', multiple: true },
        'trust-proxy': { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    throw invalidOption(`${(error as Error).message} ${USAGE}`);
  }
  const port = Number(values.port ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw invalidOption(`--port must be a port number, not "${values.port}". ${USAGE}`);
  if (values.token !== undefined && values['no-auth']) throw invalidOption(`--token and --no-auth contradict each other. ${USAGE}`);
  const trust = values['trust-proxy'];
  const trustProxy = trust === undefined ? false : trust === '' || trust === 'true' ? true : Number(trust);
  if (typeof trustProxy === 'number' && !(Number.isInteger(trustProxy) && trustProxy >= 0 && trustProxy <= 32))
    throw invalidOption(`--trust-proxy takes the number of proxies in front of the server (1 to 32), not "${trust}". ${USAGE}`);
  const token = values['no-auth'] ? undefined : (values.token ?? env.HOPPER_DASHBOARD_TOKEN ?? randomBytes(24).toString('base64url'));
  const host = values.host ?? '127.0.0.1';
  const dashboard = createDashboard({
    connection: values.redis ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: values.prefix ?? 'hopper',
    basePath: values['base-path'] ?? '/',
    auth: token === undefined ? false : { tokens: [{ token, name: 'standalone token' }] },
    allowedHosts: standaloneHosts(host, values['allowed-host'] ?? []),
    allowedOrigins: values['allowed-origin'] ?? [],
    trustProxy,
  });
  const server = createServer({ requestTimeout: 60_000, headersTimeout: 20_000 }, toNodeListener(dashboard));
  // A malformed request Node's own parser refuses gets a 400 and the socket is closed, never an exception.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
  } catch (error) {
    await dashboard.close();
    throw error;
  }
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = isIP(host) === 6 ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${actualPort}${values['base-path'] ?? '/'}`,
    token,
    async stop() {
      await dashboard.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
