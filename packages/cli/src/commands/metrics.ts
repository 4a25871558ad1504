/** `hopper metrics`: serve Hopper's Prometheus metrics on /metrics (or print one scrape with --once). */
import { HopperMetrics, startMetricsServer } from 'hopper-queue-metrics';
import { UsageError } from '../context.js';
import { intOption, type Command } from './command.js';
import { waitForStop } from './dashboard.js';

export const metricsCommand: Command = {
  words: ['metrics'],
  summary: 'serve the Prometheus metrics of every queue on /metrics (Ctrl-C to stop), or print one scrape with --once',
  usage: 'hopper metrics [<queue>...] (--port 9464 [--host 127.0.0.1] [--path /metrics] | --once) [--groups n]',
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    path: { type: 'string' },
    once: { type: 'boolean' },
    groups: { type: 'string' },
  },
  async run(ctx, { positionals, values }) {
    const groups = intOption(values, 'groups', 0);
    const queues = positionals.length > 0 ? positionals : undefined;
    for (const name of positionals) await ctx.queue(name); // unknown names fail here
    const common = { admin: ctx.admin, queues, groups: { top: groups } };
    if (values.once === true) {
      if (values.port !== undefined) throw new UsageError('--once prints one scrape and exits: it takes no --port');
      const metrics = new HopperMetrics(common);
      ctx.io.stdout.write(await metrics.metrics());
      return 0;
    }
    if (values.port === undefined) throw new UsageError('--port is required (or --once to print one scrape)');
    const port = intOption(values, 'port', 0);
    if (port > 65535) throw new UsageError(`--port must be a port number (0-65535), not "${String(values.port)}"`);
    const path = typeof values.path === 'string' ? values.path : '/metrics';
    if (!path.startsWith('/')) throw new UsageError(`--path must start with "/", not "${path}"`);
    const host = typeof values.host === 'string' ? values.host : '127.0.0.1';
    const server = await startMetricsServer({ ...common, port, host, path });
    ctx.io.stdout.write(`Serving Hopper metrics on ${server.url} (prefix "${ctx.options.prefix}"). Ctrl-C to stop.\n`);
    await waitForStop();
    await server.close();
    return 0;
  },
};
