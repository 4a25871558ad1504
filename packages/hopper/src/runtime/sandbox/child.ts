/**
 * Starting and ending one sandbox child, a process or a worker thread, behind one interface:
 * send a message, receive messages, learn how it ended, end it.
 */
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { CHILD_SOURCE } from './child-source.js';
import type { ChildExit, ChildLabel } from './errors.js';
import { serializeError, type ChildMessage, type ParentMessage, type SerializedError } from './protocol.js';

/** A running child. */
export interface ChildHandle {
  readonly label: ChildLabel;
  /** Sends a message; a no-op once the child is gone (its exit tells why). */
  send(message: ParentMessage): void;
  /** Settles once the child has ended (and, for a process, its stderr is read). Never rejects. */
  readonly exited: Promise<ChildExit>;
  /**
   * Ends the child and resolves when it is gone. A process gets SIGTERM, then SIGKILL after
   * `graceMs`; a thread is stopped at once.
   */
  end(graceMs: number): Promise<ChildExit>;
}

/** How to start children. */
export interface ChildOptions {
  useWorkerThreads: boolean;
  maxMemoryMb: number | undefined;
}

/** Starts a child that loads `file` (an absolute path) and reports each message to `onMessage`. */
export function startChild(file: string, options: ChildOptions, onMessage: (message: ChildMessage) => void): ChildHandle {
  return options.useWorkerThreads ? startThread(file, options, onMessage) : startProcess(file, options, onMessage);
}

/** How much of a child process's stderr is kept, to quote in crash errors. */
const STDERR_TAIL_CHARS = 8192;
/** After a process exits, how long to wait for its stderr and IPC to close (a grandchild may hold them). */
const CLOSE_WAIT_MS = 1000;
/** V8's last words when a heap limit is reached. */
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit|Allocation failed/;

/** Node options that take a separate value and must not be passed on to a child. */
const DROPPED_WITH_VALUE = new Set(['-e', '--eval', '-p', '--print', '--input-type', '--inspect-port', '--debug-port', '--watch-path']);
/** Node options (and their `=value` forms) a child must not inherit. */
const DROPPED_PREFIXES = ['--inspect', '--debug', '--input-type', '--eval', '--print', '--watch', '--test', '--check', '--interactive'];
const DROPPED_EXACT = new Set(['-i', '-c']);

/**
 * The parent's Node options, minus those that would break a child: its own script (`-e`/`-p`,
 * `--input-type`: the bootstrap is CommonJS), debugger ports (children would fight over them),
 * watch, test and REPL modes. Loaders (`--import`, `--require`), conditions and flags pass on, so a
 * processor file loads the way the parent's own code does.
 */
export function inheritedExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i];
    if (DROPPED_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (DROPPED_EXACT.has(arg) || DROPPED_PREFIXES.some((p) => arg === p || arg.startsWith(`${p}-`) || arg.startsWith(`${p}=`))) continue;
    kept.push(arg);
  }
  return kept;
}

function startProcess(file: string, options: ChildOptions, onMessage: (message: ChildMessage) => void): ChildHandle {
  const execArgv = inheritedExecArgv();
  if (options.maxMemoryMb !== undefined) execArgv.push(`--max-old-space-size=${options.maxMemoryMb}`);
  const child = spawn(process.execPath, [...execArgv, '-e', CHILD_SOURCE, file], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    serialization: 'json',
  });
  let stderrTail = '';
  let fatal: SerializedError | undefined;
  let hasExited = false;

  // stderr is piped only to keep its tail for crash reports; everything is passed on.
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'fatal') fatal = message.error;
    onMessage(message);
  });

  const exited = new Promise<ChildExit>((resolve) => {
    let code: number | null = null;
    let signal: NodeJS.Signals | null = null;
    let fallback: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(fallback);
      resolve({ code, signal, fatal, outOfMemory: OUT_OF_MEMORY.test(stderrTail), stderrTail });
    };
    child.once('exit', (c, s) => {
      hasExited = true;
      code = c;
      signal = s;
      fallback = setTimeout(finish, CLOSE_WAIT_MS);
    });
    // 'close' comes after 'exit' once stderr and the IPC channel are drained: the crash report is in.
    child.once('close', finish);
    child.on('error', (error) => {
      // A failed spawn has no pid and emits no 'exit'; other errors (a failed kill or send) are
      // followed by the child's exit, which reports the outcome.
      if (child.pid !== undefined) return;
      hasExited = true;
      fatal = serializeError(error);
      finish();
    });
  });

  return {
    label: { kind: 'process', id: child.pid ?? -1 },
    send(message) {
      // The callback takes send errors (the child just died): its exit reports why.
      if (child.connected) child.send(message, () => undefined);
    },
    exited,
    end(graceMs) {
      if (!hasExited) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => {
          if (!hasExited) child.kill('SIGKILL');
        }, graceMs);
        void exited.then(() => clearTimeout(killer));
      }
      return exited;
    },
  };
}

function startThread(file: string, options: ChildOptions, onMessage: (message: ChildMessage) => void): ChildHandle {
  const worker = new Worker(CHILD_SOURCE, {
    eval: true,
    workerData: { file },
    resourceLimits: options.maxMemoryMb !== undefined ? { maxOldGenerationSizeMb: options.maxMemoryMb } : undefined,
  });
  let fatal: SerializedError | undefined;
  let outOfMemory = false;
  worker.on('message', onMessage);
  // A thread's uncaught error (or its out-of-memory end) arrives here, before 'exit'.
  worker.on('error', (error: Error & { code?: unknown }) => {
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') outOfMemory = true;
    fatal ??= serializeError(error);
  });
  const exited = new Promise<ChildExit>((resolve) => {
    worker.once('exit', (code) => resolve({ code, signal: null, fatal, outOfMemory, stderrTail: '' }));
  });
  return {
    label: { kind: 'thread', id: worker.threadId },
    send(message) {
      worker.postMessage(message);
    },
    exited,
    end() {
      worker.terminate().catch(() => undefined);
      return exited;
    },
  };
}
