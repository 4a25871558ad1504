// The Hopper demo: the founding guide's scenarios (an invoice pipeline, stock sync per
// marketplace, a daily digest, a newsletter fan-out over tenants, a streamed generation with a
// budget) running against simulated services, with the dashboard to watch them.
//
//   npm run demo                      # until Ctrl-C (a bounded 15 s run in CI or without a terminal)
//   npm run demo -- --duration 60     # a bounded run
//   node examples/demo.mjs --help
//
// The scenarios are in examples/demo/*.mjs; `hopper demo` runs the same thing.
import { parseArgs } from 'node:util';
import { runDemo } from './demo/main.mjs';

const USAGE = `Usage: npm run demo -- [--duration <s>] [--port <n>] [--redis <url>] [--sqlite] [--prefix <p>]
  --duration <s>  stop by itself after <s> seconds (0: run until Ctrl-C). Default: until Ctrl-C in a
                  terminal; 15 s when CI is set or stdout is not a terminal.
  --port <n>      the dashboard's port on 127.0.0.1 (default 3000, or a free one if 3000 is taken)
  --redis <url>   the Redis to use (default: $REDIS_URL, else 127.0.0.1:6379, else a throwaway
                  redis-server, else the embedded SQLite backend)
  --sqlite        use the embedded SQLite backend even when a Redis is there
  --prefix <p>    the key prefix of the demo's queues (default hopper-demo; cleared at start)`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      duration: { type: 'string' },
      port: { type: 'string' },
      redis: { type: 'string' },
      sqlite: { type: 'boolean' },
      prefix: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const number = (name, raw, max) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    console.error(`--${name} must be an integer from 0 to ${max}, not "${raw}".\n${USAGE}`);
    process.exit(2);
  }
  return n;
};
process.exitCode = await runDemo({
  duration: values.duration !== undefined ? number('duration', values.duration, 86_400) : undefined,
  port: values.port !== undefined ? number('port', values.port, 65_535) : undefined,
  redis: values.redis,
  sqlite: values.sqlite,
  prefix: values.prefix,
});
