/**
 * Hopper's typed errors: the module every import uses. The errors live in modules by area and are
 * re-exported here:
 *
 * - errors-base.ts: the error codes ({@link ErrorCode}), the brand and {@link HopperError};
 * - errors-input.ts: refused options, names, ids, schedules, data, and adds refused by a limit;
 * - errors-job.ts: a job missing, locked, in the wrong state, a flow or a replay refused;
 * - errors-signals.ts: what a processor throws to steer its job (UnrecoverableError, DelayedError...);
 * - errors-backend.ts: closed components, connection and storage failures, migration refusals.
 *
 * Every error Hopper throws on purpose carries a brand (`Symbol.for('hopper.error')` set to its
 * code), and `instanceof` checks the brand as well as the prototype chain. An app that loads
 * Hopper twice (an ESM and a CommonJS copy, say) still recognises errors made by the other copy.
 */
export { ErrorCode, HopperError, hopperErrorCode } from './errors-base.js';
export * from './errors-input.js';
export * from './errors-job.js';
export * from './errors-signals.js';
export * from './errors-backend.js';
