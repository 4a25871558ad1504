// Hopper on its embedded SQLite backend: the same classes as the `hopper` adapter; the harness
// gives this library a fresh SQLite file database per run (`sqlite:<file>`) instead of Redis.

export { Queue, Worker, QueueEvents, version } from './hopper.mjs';

/** Library name used in reports. */
export const name = 'hopper-sqlite';
