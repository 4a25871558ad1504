/**
 * `hopper-queue/migrate`: move a live BullMQ deployment to Hopper with no job lost, and back
 * (docs/migrating.md). The `hopper migrate` command is a thin layer over these functions.
 *
 * @example
 * import { migrateFromBullMQ, summaryLine } from 'hopper-queue/migrate';
 * const report = await migrateFromBullMQ({ from: process.env.REDIS_URL!, queue: 'mail', follow: true, quietForMs: 60_000 });
 * console.log(summaryLine(report));
 */
export { migrateFromBullMQ } from './to-hopper.js';
export { migrateToBullMQ, DEFAULT_BULLMQ_VERSION } from './to-bullmq.js';
export { HOPPER_ONLY, type HopperOnlyFeature } from './export-jobs.js';
export {
  summaryLine,
  isComplete,
  MIGRATED_STATES,
  type MigrateOptions,
  type MigrationReport,
  type MigrationProgress,
  type MigratedState,
  type StateTally,
  type LeftBehind,
  type Refusal,
} from './report.js';
export { MigrationError, type MigrationRefusal } from '../job/errors.js';
