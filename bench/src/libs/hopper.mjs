// Hopper adapter: the workspace package `hopper`, exposed exactly as the BullMQ adapter is.
//
// Hopper is imported dynamically so that a missing build gives a message that says what to do,
// rather than Node's "Cannot find module .../dist/esm/index.js".

import { createRequire } from 'node:module';

/** Library name used in reports. */
export const name = 'hopper';

let hopper;
try {
  hopper = await import('hopper-queue');
} catch (error) {
  const missingBuild = error?.code === 'ERR_MODULE_NOT_FOUND' && /hopper[\\/]+dist[\\/]/.test(String(error.message));
  const reason = missingBuild
    ? 'packages/hopper/dist/esm/index.js does not exist: build Hopper first (`npm run build` at the repository root), or measure BullMQ alone with --lib=bullmq'
    : `importing it failed: ${error?.stack ?? error}`;
  throw new Error(`Hopper cannot be benchmarked: ${reason}`);
}

for (const exported of ['Queue', 'Worker', 'QueueEvents']) {
  if (typeof hopper[exported] !== 'function') {
    throw new Error(`Hopper cannot be benchmarked: its build does not export a ${exported} class`);
  }
}

export const { Queue, Worker, QueueEvents } = hopper;

/** Installed version (the workspace package's own). */
export const version = createRequire(import.meta.url)('hopper-queue/package.json').version;
