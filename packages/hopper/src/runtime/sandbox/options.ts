/**
 * Validates a sandbox pool's options and fills in the defaults, with errors that name the
 * option and the fix.
 */
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock, type Clock } from '../../clock/clock.js';
import { InvalidOptionsError } from '../../job/errors.js';
import type { SandboxOptions } from './types.js';

/** Default `idleTimeoutMs`. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** Default `killGraceMs`. */
export const DEFAULT_KILL_GRACE_MS = 5_000;
/** Default `loadRetryMs`. */
export const DEFAULT_LOAD_RETRY_MS = 5_000;

/** The options with every default applied. */
export interface ResolvedSandboxOptions {
  /** The processor file, absolute. */
  file: string;
  useWorkerThreads: boolean;
  maxChildren: number;
  minChildren: number;
  idleTimeoutMs: number;
  killGraceMs: number;
  loadRetryMs: number;
  maxMemoryMb: number | undefined;
  clock: Clock;
}

/** Checks the options (throwing `InvalidOptionsError`) and applies the defaults. */
export function resolveSandboxOptions(processorFile: string | URL, options: SandboxOptions): ResolvedSandboxOptions {
  const maxChildren = integer('maxChildren', options.maxChildren, 1);
  const minChildren = integer('minChildren', options.minChildren ?? 0, 0);
  if (minChildren > maxChildren)
    throw new InvalidOptionsError(`Sandbox option minChildren (${minChildren}) must not exceed maxChildren (${maxChildren}).`);
  return {
    file: resolveProcessorFile(processorFile),
    useWorkerThreads: options.useWorkerThreads ?? false,
    maxChildren,
    minChildren,
    idleTimeoutMs: integer('idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, 0),
    killGraceMs: integer('killGraceMs', options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, 0),
    loadRetryMs: integer('loadRetryMs', options.loadRetryMs ?? DEFAULT_LOAD_RETRY_MS, 0),
    maxMemoryMb: options.maxMemoryMb === undefined ? undefined : integer('maxMemoryMb', options.maxMemoryMb, 1),
    clock: options.clock ?? systemClock,
  };
}

/** An absolute path from a path (relative ones resolve against the current directory) or a file: URL. */
function resolveProcessorFile(file: string | URL): string {
  if (file instanceof URL) return fileURLToPath(file);
  if (typeof file !== 'string' || file === '')
    throw new InvalidOptionsError(
      'The sandboxed processor must be a file path or a file: URL, e.g. new Worker(name, "/app/processor.js").',
    );
  return file.startsWith('file:') ? fileURLToPath(file) : resolvePath(file);
}

function integer(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new InvalidOptionsError(`Sandbox option ${name} must be an integer >= ${min}, got ${String(value)}.`);
  return value;
}
