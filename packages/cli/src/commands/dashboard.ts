/** `hopper dashboard`: the standalone dashboard server (hopper-queue-dashboard), on loopback with a generated token by default. */
import { ErrorCode, hopperErrorCode } from 'hopper-queue';
import { runStandalone } from 'hopper-queue-dashboard';
import { UsageError } from '../context.js';
import type { Command } from './command.js';

/** Resolves on the first SIGINT or SIGTERM (a long-running command's stop). */
export function waitForStop(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export const dashboardCommand: Command = {
  words: ['dashboard'],
  summary: 'run the dashboard server (HTTP API and /metrics) on 127.0.0.1 with a generated token (Ctrl-C to stop)',
  usage:
    'hopper dashboard [--port 3000] [--host 127.0.0.1] [--base-path /] [--token <t> | --no-auth] [--allowed-host <name>]... [--allowed-origin <origin>]... [--trust-proxy <hops>]',
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'base-path': { type: 'string' },
    token: { type: 'string' },
    'no-auth': { type: 'boolean' },
    'allowed-host': { type: 'string', multiple: true },
    'allowed-origin': { type: 'string', multiple: true },
    'trust-proxy': { type: 'string' },
  },
  async run(ctx, { positionals, values }) {
    if (positionals.length > 0) throw new UsageError(`the dashboard shows every queue: it takes no queue name (got "${positionals[0]}")`);
    const argv = ['--redis', ctx.options.redis, '--prefix', ctx.options.prefix];
    for (const name of ['port', 'host', 'base-path', 'token', 'trust-proxy'] as const) {
      const value = values[name];
      if (typeof value === 'string') argv.push(`--${name}`, value);
    }
    for (const name of ['allowed-host', 'allowed-origin'] as const) {
      const list = values[name];
      if (Array.isArray(list)) for (const value of list) argv.push(`--${name}`, String(value));
    }
    if (values['no-auth'] === true) argv.push('--no-auth');
    let running: Awaited<ReturnType<typeof runStandalone>>;
    try {
      running = await runStandalone(argv, {});
    } catch (error) {
      // runStandalone refuses bad settings with InvalidOptionsError naming the option.
      if (hopperErrorCode(error) === ErrorCode.InvalidOptions) throw new UsageError((error as Error).message);
      throw error;
    }
    ctx.print({ url: running.url, api: `${running.url}api/`, metrics: `${running.url}metrics`, token: running.token ?? null }, (v) =>
      [
        `Hopper dashboard on ${v.url} (API: ${v.api}queues, Prometheus: ${v.metrics})`,
        v.token ? `Authenticate with the header: Authorization: Bearer ${v.token}` : 'Authentication is OFF (--no-auth).',
        'Ctrl-C to stop.',
      ].join('\n'),
    );
    await waitForStop();
    await running.stop();
    return 0;
  },
};
