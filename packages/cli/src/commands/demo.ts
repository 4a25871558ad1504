/**
 * `hopper demo`: the repository's demo (examples/demo/), the founding guide's scenarios running
 * with the dashboard. It runs from a clone of the Hopper repository (the demo's files are not in
 * the published package).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../context.js';
import { intOption, MAX_TIMER_MS, type Command } from './command.js';

/** The demo's entry, from packages/cli/dist/commands/ up to the repository root. */
const DEMO = new URL('../../../../examples/demo/main.mjs', import.meta.url);

interface DemoModule {
  runDemo: (options: {
    duration?: number;
    port?: number;
    redis?: string;
    sqlite?: boolean;
    prefix?: string;
    print?: (line: string) => void;
  }) => Promise<number>;
}

export const demoCommand: Command = {
  words: ['demo'],
  summary: 'run the demo: invoices, stock sync, a digest, a newsletter and a streamed generation, with the dashboard (Ctrl-C to stop)',
  usage: 'hopper demo [--duration <s>] [--port 3000] [--sqlite] [--redis <url>] [--prefix hopper-demo]',
  options: {
    duration: { type: 'string' },
    port: { type: 'string' },
    sqlite: { type: 'boolean' },
  },
  async run(ctx, { positionals, values }) {
    if (positionals.length > 0) throw new UsageError(`the demo takes no queue name (got "${positionals[0]}")`);
    if (!existsSync(DEMO)) {
      throw new Error(
        `the demo's files are not here (${fileURLToPath(DEMO)}): \`hopper demo\` runs from a clone of the Hopper repository, where \`npm run demo\` does the same.`,
      );
    }
    const duration = values.duration === undefined ? undefined : intOption(values, 'duration', 0, 0, Math.floor(MAX_TIMER_MS / 1000));
    const port = values.port === undefined ? undefined : intOption(values, 'port', 3000, 0, 65535);
    if (values.sqlite === true && typeof values.redis === 'string') throw new UsageError('--sqlite and --redis contradict each other');
    const { runDemo } = (await import(DEMO.href)) as DemoModule;
    return runDemo({
      duration,
      port,
      // Only an explicit --redis (or REDIS_URL, read by the demo) forces a Redis: without one the demo
      // falls back to a throwaway redis-server, then to SQLite.
      redis: typeof values.redis === 'string' ? values.redis : undefined,
      sqlite: values.sqlite === true,
      prefix: typeof values.prefix === 'string' ? values.prefix : undefined,
      print: (line) => ctx.io.stdout.write(`${line}\n`),
    });
  },
};
