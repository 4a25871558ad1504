/**
 * What every command gets: the parsed global options, the Admin over the prefix, output that
 * honours `--json`, confirmation of destructive actions, and progress on long ones.
 */
import { createInterface } from 'node:readline/promises';
import { Admin, InvalidNameError, InvalidOptionsError, type Queue } from 'hopper-queue';

/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Options every command takes. */
export interface GlobalOptions {
  /** Redis URL (`--redis`, else `REDIS_URL`, else redis://127.0.0.1:6379). */
  redis: string;
  /** Key prefix of the queues (`--prefix`, else `HOPPER_PREFIX`, else `hopper`). */
  prefix: string;
  /** Machine-readable output on stdout. */
  json: boolean;
  /** Skip the confirmation of destructive actions. */
  yes: boolean;
  /** How long the first contact with the backend may take before the command gives up, ms (`--timeout`, seconds; default 10). */
  timeoutMs: number;
}

/** The default of `--timeout`, seconds. */
export const DEFAULT_TIMEOUT_S = 10;

/** The parseArgs spec of the global options, merged into each command's own. */
export const GLOBAL_OPTIONS = {
  redis: { type: 'string' },
  prefix: { type: 'string' },
  json: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Reads the global options out of a parseArgs result. */
export function globalOptions(values: Record<string, unknown>, env: NodeJS.ProcessEnv): GlobalOptions {
  const timeout = values.timeout as string | undefined;
  const seconds = timeout === undefined ? DEFAULT_TIMEOUT_S : Number(timeout);
  if (!(Number.isFinite(seconds) && seconds > 0 && seconds <= 86_400)) {
    throw new UsageError(`--timeout takes a number of seconds from 0 to 86400 (e.g. --timeout 5), got "${timeout}"`);
  }
  return {
    redis: (values.redis as string | undefined) ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: (values.prefix as string | undefined) ?? (env.HOPPER_PREFIX || undefined) ?? 'hopper',
    json: values.json === true,
    yes: values.yes === true,
    timeoutMs: Math.round(seconds * 1000),
  };
}

/** Streams a command writes to (the tests pass their own). */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** One command's run: options, the Admin, and output helpers. */
export class Context {
  private adminInstance: Admin | undefined;

  constructor(
    readonly options: GlobalOptions,
    readonly io: Io,
  ) {}

  /** The Admin over `--prefix`, opened on first use. */
  get admin(): Admin {
    if (!this.adminInstance) {
      try {
        this.adminInstance = new Admin({ connection: this.options.redis, prefix: this.options.prefix });
      } catch (error) {
        // A refused --redis or --prefix is a usage mistake: say which flag (exit code 2).
        if (error instanceof InvalidNameError) throw new UsageError(`--prefix: ${error.message}`);
        if (error instanceof InvalidOptionsError) throw new UsageError(`--redis (or REDIS_URL): ${error.message}`);
        throw error;
      }
    }
    return this.adminInstance;
  }

  /**
   * Reaches the backend once (it lists the queues) within `--timeout`: a server that refuses, or
   * accepts and never answers, ends the command with one line at once, not after retries.
   */
  async reach(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const where = this.options.redis.replace(/\/\/[^@/]*@/, '//***@');
        reject(
          new Error(
            `no answer from ${where} within ${this.options.timeoutMs / 1000} s (--timeout): check that it is running and reachable (--redis, REDIS_URL), or raise --timeout for a slow server.`,
          ),
        );
      }, this.options.timeoutMs);
    });
    try {
      await Promise.race([this.admin.listQueues(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The existing queue `name` (QueueNotFoundError otherwise). */
  queue(name: string | undefined): Promise<Queue> {
    if (!name) throw new UsageError('a queue name is required');
    return this.admin.queue(name);
  }

  /** Prints `value` as JSON with `--json`, else the text `render` makes of it. */
  print<T>(value: T, render: (value: T) => string): void {
    this.io.stdout.write(this.options.json ? `${JSON.stringify(value, null, 2)}\n` : `${render(value)}\n`);
  }

  /** A line for the operator on stderr (never mixed into `--json` output). */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /**
   * Asks before a destructive action. `--yes` skips the question; without a terminal to ask on,
   * the action is refused (a script must say `--yes`).
   */
  async confirm(question: string): Promise<void> {
    if (this.options.yes) return;
    if (!this.io.stdin.isTTY) {
      throw new UsageError(`${question} Refused: no terminal to confirm on. Add --yes to proceed without asking.`);
    }
    const rl = createInterface({ input: this.io.stdin, output: this.io.stderr });
    try {
      const answer = await rl.question(`${question} [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('Cancelled: nothing was changed.');
    } finally {
      rl.close();
    }
  }

  /** A progress line on stderr for long operations, redrawn in place on a terminal. */
  progress(label: string, done: number, total?: number): void {
    if (this.options.json || !this.io.stderr.isTTY) return;
    const tail = total === undefined ? `${done}` : `${done}/${total} (${total > 0 ? Math.floor((done * 100) / total) : 100}%)`;
    this.io.stderr.write(`\r${label}: ${tail}   `);
  }

  /** Ends a progress line. */
  progressDone(): void {
    if (!this.options.json && this.io.stderr.isTTY) this.io.stderr.write('\n');
  }

  /** Closes the Admin and every queue it opened. */
  async close(): Promise<void> {
    await this.adminInstance?.close();
  }
}
