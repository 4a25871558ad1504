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

/** Reads an integer option from `min` to `max` (default: no bound below 2^53), with a default. */
export function intOption(values: CommandArgs['values'], name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\s*-?\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, not "${String(raw)}"`);
  }
  return n;
}

/** Longest wait a timer can take, ms (2^31 - 1, about 24.8 days): longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
