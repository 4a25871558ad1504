/**
 * The `processors` option of `registerQueue`: one Worker per entry, created with the queue, as
 * @nestjs/bullmq does. Entries are checked before the queue or any worker is created.
 */
import type { Processor, WorkerOptions } from 'hopper-queue';
import { invalidOptions } from './errors.js';

/** What one entry asks for: a Worker running this function or sandboxed file, with these options. */
export interface ProcessorSpec {
  processor: Processor | string | URL;
  options: Partial<WorkerOptions>;
}

const SHAPES = 'a function, the path (or file URL) of a processor file, { callback, ...workerOptions } or { path, ...workerOptions }';

function isPath(value: unknown): value is string | URL {
  return (typeof value === 'string' && value !== '') || value instanceof URL;
}

/** The workers `processors` asks for, or an InvalidOptionsError naming the first bad entry. */
export function processorSpecs(queueName: string, processors: unknown): ProcessorSpec[] {
  if (processors === undefined) return [];
  const where = `registerQueue "${queueName}": processors`;
  if (!Array.isArray(processors)) throw invalidOptions(`${where} must be an array of processors (${SHAPES}), got ${typeof processors}.`);
  return processors.map((entry: unknown, index): ProcessorSpec => {
    if (typeof entry === 'function') return { processor: entry as Processor, options: {} };
    if (isPath(entry)) return { processor: entry, options: {} };
    if (entry !== null && typeof entry === 'object') {
      const { callback, path, ...options } = entry as { callback?: unknown; path?: unknown } & Partial<WorkerOptions>;
      if (typeof callback === 'function' && path === undefined) return { processor: callback as Processor, options };
      if (isPath(path) && callback === undefined) return { processor: path, options };
    }
    throw invalidOptions(`${where}[${index}] must be ${SHAPES} (exactly one of callback and path).`);
  });
}
