/** The shape of one `hopper` command. */
import type { ParseArgsConfig } from 'node:util';
import { UsageError, type Context } from '../context.js';

/** Parsed arguments of one command: its positionals (after the command words) and option values. */
export interface CommandArgs {
  positionals: string[];
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
}

/** One command: `words` select it (`['jobs', 'list']`), `run` does it and returns the exit code. */
export interface Command {
  words: string[];
  /** One line for the command list. */
  summary: string;
  /** Its synopsis, shown by `--help` and after a usage error. */
  usage: string;
  /** Its own options (the global ones are added). */
  options?: NonNullable<ParseArgsConfig['options']>;
  run(ctx: Context, args: CommandArgs): Promise<number | void>;
}

/** Reads a non-negative integer option, with a default. */
export function intOption(values: CommandArgs['values'], name: string, fallback: number, min = 0): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < min) {
    throw new UsageError(`--${name} must be an integer >= ${min}, not "${String(raw)}"`);
  }
  return n;
}
