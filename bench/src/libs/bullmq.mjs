// BullMQ adapter: the pinned bullmq devDependency, exposed exactly as the Hopper adapter is.

import { createRequire } from 'node:module';

export { Queue, Worker, QueueEvents } from 'bullmq';

/** Library name used in reports. */
export const name = 'bullmq';

/** Installed version, read from the package itself so the report cannot drift from the pin. */
export const version = createRequire(import.meta.url)('bullmq/package.json').version;
