/**
 * Harness for the Redis Cluster tier: a cluster connection per test, components closed after it
 * (last opened, first closed), and their `error` events failing the test unless declared
 * (`expectErrors`). Queue names are unique per call, so queues land in different slots.
 */
import { Cluster } from 'ioredis';
import { afterEach, inject } from 'vitest';
import { ErrorWatch, type ErrorMatcher } from './errors.js';

const closables: { close(): Promise<void> }[] = [];
let errors = new ErrorWatch();

afterEach(async () => {
  // Last opened, first closed: the shared cluster connection outlives its users.
  for (const closable of closables.splice(0).reverse()) await closable.close();
  const watch = errors;
  errors = new ErrorWatch();
  watch.check();
});

/** Closes `c` after the test and watches its `error` events. */
export function track<T extends { close(): Promise<void> }>(c: T): T {
  closables.push(c);
  return errors.watch(c, c.constructor.name);
}

/** Declares `error` events this test provokes on purpose. */
export function expectErrors(matcher: ErrorMatcher): void {
  errors.expect(matcher);
}

/** A new connection to the test cluster, closed after the test. */
export function cluster(): Cluster {
  const client = new Cluster(inject('clusterNodes'), { redisOptions: { maxRetriesPerRequest: null } });
  track({ close: async () => void client.disconnect() });
  return client;
}

let n = 0;
/** A queue name no other test uses (so queues spread over slots). */
export const uniqueName = (): string => `cq${Date.now().toString(36)}${++n}`;
