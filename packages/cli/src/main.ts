/**
 * The `hopper` command: inspect and operate the queues under one prefix from a terminal or a
 * script. `main` parses the arguments, runs the command and returns the exit code: 0 done,
 * 1 the operation failed (a job or queue not found, Redis refused), 2 the command was called wrong.
 */
import { parseArgs } from 'node:util';
import { Context, GLOBAL_OPTIONS, UsageError, globalOptions, type Io } from './context.js';
import type { Command } from './commands/command.js';
import { dlqCommands } from './commands/dlq.js';
import { doctorCommand } from './commands/doctor.js';
import { jobsCommands } from './commands/jobs.js';
import { queueCommands } from './commands/queue-ops.js';
import { queuesCommand } from './commands/queues.js';
import { schedulerCommands } from './commands/schedulers.js';
import { topCommand } from './commands/top.js';
import { metricsCommand } from './commands/metrics.js';
import { dashboardCommand } from './commands/dashboard.js';
import { demoCommand } from './commands/demo.js';
import { migrateCommand } from './commands/migrate.js';

/** Every command, in the order `hopper --help` lists them. */
export const COMMANDS: Command[] = [
  queuesCommand,
  ...jobsCommands,
  ...dlqCommands,
  ...schedulerCommands,
  ...queueCommands,
  topCommand,
  dashboardCommand,
  metricsCommand,
  doctorCommand,
  migrateCommand,
  demoCommand,
];

/** Commands that do not reach the backend before running: servers, and the demo. */
const SERVES = new Set(['demo', 'dashboard', 'metrics']);

const GLOBAL_HELP = `Global options:
  --redis <url>     Redis to connect to (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --prefix <p>      key prefix of the queues (default: hopper)
  --json            print machine-readable JSON on stdout
  -y, --yes         do not ask before destructive actions (required without a terminal)
  --timeout <s>     give up when Redis does not answer within this many seconds (default: 10)
  -h, --help        help for a command`;

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.words.join(' ').length));
  return [
    'hopper: inspect and operate Hopper queues.',
    '',
    'Usage: hopper <command> [arguments] [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.words.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    GLOBAL_HELP,
    '',
    'Exit codes: 0 done, 1 the operation failed, 2 wrong usage (migrate: 3 incomplete, run again).',
  ].join('\n');
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  // The longest run of leading words that names a command (`jobs list` before `jobs`).
  let best: { command: Command; rest: string[] } | undefined;
  for (const command of COMMANDS) {
    const n = command.words.length;
    if (command.words.every((word, i) => argv[i] === word) && (!best || n > best.command.words.length)) {
      best = { command, rest: argv.slice(n) };
    }
  }
  return best;
}

/** Runs the `hopper` command with these arguments; resolves to its exit code. */
export async function main(argv: string[], io: Io = process, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout.write(`${help()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = COMMANDS.filter((c) => c.words[0] === argv[0]);
    const hint =
      group.length > 0 ? `"${argv[0]}" needs a subcommand: ${group.map((c) => c.words[1]).join(', ')}` : `unknown command "${argv[0]}"`;
    io.stderr.write(`hopper: ${hint}. Run \`hopper --help\` for the list.\n`);
    return 2;
  }
  const { command, rest } = found;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...command.options }, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr.write(`hopper ${command.words.join(' ')}: ${(error as Error).message}\nUsage: ${command.usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout.write(`${command.summary}\n\nUsage: ${command.usage}\n\n${GLOBAL_HELP}\n`);
    return 0;
  }
  let ctx: Context;
  try {
    ctx = new Context(globalOptions(parsed.values, env), io);
  } catch (error) {
    io.stderr.write(`hopper ${command.words.join(' ')}: ${(error as Error).message}\nUsage: ${command.usage}\n`);
    return 2;
  }
  try {
    // Every command but the servers (which keep running through an outage and report it) and the
    // demo (which picks its own backend) first reaches its backend, within --timeout.
    if (!SERVES.has(command.words[0])) await ctx.reach();
    const code = await command.run(ctx, { positionals: parsed.positionals, values: parsed.values });
    return code ?? 0;
  } catch (error) {
    const usage = error instanceof UsageError;
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`hopper ${command.words.join(' ')}: ${message}\n${usage ? `Usage: ${command.usage}\n` : ''}`);
    return usage ? 2 : 1;
  } finally {
    await ctx.close().catch(() => undefined);
  }
}
