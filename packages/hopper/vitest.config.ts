import { defineConfig } from 'vitest/config';

/**
 * The behaviour test files that run against the SQLite backend too (HOPPER_TEST_BACKEND=sqlite):
 * the capability frontier of the SQLite backend, grown as it implements more of the seam (see
 * docs/backends.md). No test is skipped by backend name inside a file: a file is listed here
 * once all of it passes on SQLite.
 *
 * Not listed, by capability: test/groups/processes.test.ts and test/schedulers/processes.test.ts
 * run worker or producer child processes on the test's connection, and the SQLite tier's
 * `sqlite::memory:` database is private to one process. test/schedule/** tests the schedule
 * arithmetic alone (no backend): the engine tier runs it once.
 */
export const SQLITE_TEST_FILES: string[] = [
  'test/streams/output.test.ts',
  'test/limits/weighted.test.ts',
  'test/limits/budgets.test.ts',
  'test/steps/runs.test.ts',
  'test/dedup/keep-last.test.ts',
  'test/admin/admin.test.ts',
  'test/backend-sqlite/**/*.test.ts',
  'test/cancel/timeout.test.ts',
  'test/cancel/worker-cancel.test.ts',
  'test/compat/behaviour.test.ts',
  'test/compat/bullmq-options.test.ts',
  'test/deadletter/deadletter.test.ts',
  'test/dedup/removal.test.ts',
  'test/events/queue-events.test.ts',
  'test/flows/dedup.test.ts',
  'test/flows/failed-child-deleted.test.ts',
  'test/flows/flows.test.ts',
  'test/flows/ignored.test.ts',
  'test/flows/remove-tree.test.ts',
  'test/flows/retry-child.test.ts',
  'test/groups/changes.test.ts',
  'test/groups/combos.test.ts',
  'test/groups/groups.test.ts',
  'test/groups/limits.test.ts',
  'test/groups/release.test.ts',
  'test/groups/settings.test.ts',
  'test/groups/weighted.test.ts',
  'test/job/manual-moves.test.ts',
  'test/job/methods.test.ts',
  'test/queue/add.test.ts',
  'test/queue/deduplication.test.ts',
  'test/queue/getters.test.ts',
  'test/queue/management.test.ts',
  'test/queue/startup.test.ts',
  'test/queue/validation-messages.test.ts',
  'test/reliability/attempts.test.ts',
  'test/reliability/stalls.test.ts',
  'test/sandbox/run.test.ts',
  'test/schedulers/lateness.test.ts',
  'test/schedulers/legacy-repeat.test.ts',
  'test/schedulers/occurrence-retries.test.ts',
  'test/schedulers/pending-run.test.ts',
  'test/schedulers/ready-at-once.test.ts',
  'test/schedulers/schedulers.test.ts',
  'test/telemetry/exact-metrics.test.ts',
  'test/telemetry/metrics.test.ts',
  'test/types/seam-results.test.ts',
  'test/worker/close.test.ts',
  'test/worker/delay.test.ts',
  'test/worker/large-concurrency.test.ts',
  'test/worker/lifecycle.test.ts',
  'test/worker/manual.test.ts',
  'test/worker/process.test.ts',
  'test/worker/rate-limit-delay.test.ts',
  'test/worker/rate-limit.test.ts',
  'test/worker/retries.test.ts',
];

/**
 * Test files run two at a time, each on its own key prefix (or its own SQLite database): most of a
 * behaviour test's time is spent waiting (timers, locks, child processes), and Vitest's default on a
 * 2-core machine would be one file at a time. (npm test runs both tiers and the other packages at
 * once, so the CPU is shared already: more would only make timing-sensitive tests slower.)
 * HOPPER_TEST_WORKERS overrides it (1: one file at a time, to bisect an interaction between files).
 */
const workers = Number(process.env.HOPPER_TEST_WORKERS ?? 2);
if (!Number.isInteger(workers) || workers < 1)
  throw new Error(`HOPPER_TEST_WORKERS must be a positive integer, got "${process.env.HOPPER_TEST_WORKERS}".`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: workers,
    projects: [
      {
        extends: true,
        test: {
          name: 'engine',
          include: ['test/**/*.test.ts'],
          // The SQLite backend's own tests (no Redis) run in engine-sqlite.
          exclude: ['test/scale/**', 'test/cluster/**', 'test/backend-sqlite/**'],
          globalSetup: ['./test/helpers/global-redis.ts'],
          setupFiles: ['./test/helpers/setup-invariants.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'engine-sqlite',
          include: SQLITE_TEST_FILES,
          // Each file opens its own in-memory databases, so the files of one worker can share the
          // modules they import: loading the engine once per worker instead of once per file.
          isolate: false,
          env: { HOPPER_TEST_BACKEND: 'sqlite' },
          setupFiles: ['./test/helpers/setup-invariants.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'scale',
          include: ['test/scale/**/*.test.ts'],
          // Full-size runs measure throughput and bounds with several processes each: one at a time.
          fileParallelism: false,
          globalSetup: ['./test/helpers/global-redis.ts'],
          testTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: ['./test/helpers/global-cluster.ts'],
          fileParallelism: false,
        },
      },
    ],
  },
});
