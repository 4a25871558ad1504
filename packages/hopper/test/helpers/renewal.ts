/**
 * Stall tests need a worker whose locks expire while its processor still runs (as under a blocked
 * event loop or a lost network). `lockRenewTime` must be below `lockDuration` (a worker refuses
 * anything else, issue 34), so they stop the renewal instead.
 */
import type { Worker } from '../../src/index.js';

/**
 * Stops `worker`'s periodic lock renewal: its first renewal (the heartbeat at start) and the
 * renewals the worker asks for itself (after its cancel subscription) still run, but none is
 * scheduled after them, as if `lockRenewTime` were longer than the test. Returns the worker.
 */
export function withoutLockRenewal<W extends Pick<Worker, 'lockRenewer'>>(worker: W): W {
  (worker.lockRenewer as unknown as { schedule(): void }).schedule = () => undefined;
  return worker;
}
