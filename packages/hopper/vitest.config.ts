import { defineConfig } from 'vitest/config';

/**
 * The behaviour test files that run against the SQLite backend too (HOPPER_TEST_BACKEND=sqlite):
 * the capability frontier of the SQLite backend, grown as it implements more of the seam (see
 * docs/backends.md). No test is skipped by backend name inside a file: a file is listed here
 * once all of it passes on SQLite; a part of a file that only Redis has lives in a Redis-only file.
 *
 * A test that runs worker or producer processes on the test's connection asks for
 * `useHopper({ processes: true })`: on this tier it then gets a database file of its own, which
 * every process on the machine opens, as a SQLite deployment shares one file (the default
 * `sqlite::memory:` is private to one process).
 *
 * Not listed, Redis-only by capability (what they test does not exist on SQLite):
 * - test/backend-redis/**: the Redis backend's own tests (connections and their deadlines, a
 *   server gone under a worker, reconnects and re-sent calls, Functions and script loading, script
 *   errors, orphan release and removal, the Redis form of the invariant audit).
 * - test/reliability/reconnect-release.test.ts, test/reliability/half-open.test.ts: Redis
 *   connections dropped or gone half-open under a worker (a SQLite call holds no connection).
 * - test/reliability/memory-pressure.test.ts: a Redis server full under maxmemory (RedisFullError).
 * - test/queue/dataset-reset.test.ts: a Redis dataset reset (FLUSHALL) under a running app.
 * - test/streams/output-connections.test.ts: counts a Redis server's connections (stream readers
 *   share them; a SQLite reader holds none).
 * - test/admin/doctor.test.ts: `hopper doctor`'s Redis server checks, on redis-servers started with
 *   the settings under test (a SQLite database has no such server; the doctor's queue checks run on
 *   both: test/admin/doctor-clock.test.ts).
 * - test/examples/examples.test.ts, test/readme/readme.test.ts: the documented Redis examples, run
 *   against the test Redis (the SQLite example: test/backend-sqlite/example.test.ts).
 * Not listed, no backend at all (the engine tier runs them once):
 * - test/schedule/**: the schedule arithmetic.
 * - test/sandbox/crash.test.ts, lifecycle.test.ts, dist.test.ts, run.test.ts: the sandbox pool on
 *   its own (test/sandbox/worker-sandbox.test.ts runs it through a Worker).
 * - test/packaging/**, test/types/**: the built package's loading, and a guard reading the sources.
 * - test/job/opts-cache.test.ts: the worker's cache of parsed job options, on its own.
 */
export const SQLITE_TEST_FILES: string[] = [
  'test/streams/output.test.ts',
  'test/streams/stream-attempts.test.ts',
  'test/limits/weighted.test.ts',
  'test/limits/budgets.test.ts',
  'test/limits/budget-decimals.test.ts',
  'test/steps/runs.test.ts',
  'test/steps/run-ids.test.ts',
  'test/dedup/keep-last.test.ts',
  'test/admin/admin.test.ts',
  'test/backend-sqlite/**/*.test.ts',
  'test/lifecycle/**/*.test.ts',
  'test/cancel/timeout.test.ts',
  'test/cancel/worker-cancel.test.ts',
  'test/compat/behaviour.test.ts',
  'test/compat/bullmq-options.test.ts',
  'test/compat/queue-base.test.ts',
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
  'test/queue/same-tick-refusals.test.ts',
  'test/queue/deduplication.test.ts',
  'test/queue/getters.test.ts',
  'test/queue/management.test.ts',
  'test/queue/startup.test.ts',
  'test/queue/validation-messages.test.ts',
  'test/reliability/attempts.test.ts',
  'test/reliability/stalls.test.ts',
  'test/schedulers/lateness.test.ts',
  'test/schedulers/occurrence-retries.test.ts',
  'test/schedulers/legacy-repeat.test.ts',
  'test/schedulers/pending-run.test.ts',
  'test/schedulers/earlier-ids.test.ts',
  'test/schedulers/ready-at-once.test.ts',
  'test/schedulers/schedulers.test.ts',
  'test/telemetry/exact-metrics.test.ts',
  'test/telemetry/metrics.test.ts',
  'test/types/seam-results.test.ts',
  'test/validation/bad-input.test.ts',
  'test/fuzz/api-fuzz.test.ts',
  'test/worker/close.test.ts',
  'test/worker/delay.test.ts',
  'test/worker/large-concurrency.test.ts',
  'test/worker/lifecycle.test.ts',
  'test/worker/manual.test.ts',
  'test/worker/process.test.ts',
  'test/worker/processor-signal.test.ts',
  'test/worker/rate-limit-delay.test.ts',
  'test/worker/rate-limit.test.ts',
  'test/worker/retries.test.ts',
  'test/worker/thrown-values.test.ts',
  'test/worker/backoff-bounds.test.ts',
  'test/flows/failures.test.ts',
  'test/flows/chunked-resume.test.ts',
  'test/flows/crash.test.ts',
  'test/steps/steps.test.ts',
  'test/reliability/model.test.ts',
  'test/reliability/model-flows.test.ts',
  'test/reliability/model-groups.test.ts',
  'test/reliability/model-schedulers.test.ts',
  'test/reliability/model-cancel.test.ts',
  'test/reliability/crash.test.ts',
  'test/reliability/resend.test.ts',
  'test/reliability/bounded-release.test.ts',
  'test/queue/bullmq-api.test.ts',
  'test/queue/bounded-groups.test.ts',
  'test/queue/add-bulk-large.test.ts',
  'test/schedulers/processes.test.ts',
  'test/cancel/cancel.test.ts',
  'test/cancel/sticky.test.ts',
  'test/telemetry/otel.test.ts',
  'test/telemetry/telemetry.test.ts',
  'test/admin/doctor-clock.test.ts',
  'test/sandbox/worker-sandbox.test.ts',
  'test/queue/bounded.test.ts',
  'test/groups/processes.test.ts',
];

/**
 * The engine Redis tier's files that `npm test` runs in its third lane, after the other packages'
 * tests, instead of in the engine's own lane (scripts/test-all.mjs sets HOPPER_TEST_PART): files
 * that mostly wait on child processes (the examples and the README's blocks run as programs, the
 * packaging checks, worker processes sharing a queue), about a minute of the Redis tier, so the
 * engine's lane, the longest, ends sooner (the two then end about together). With
 * HOPPER_TEST_PART unset (`npm run test:engine`, a developer's `npx vitest run --project engine
 * ...`) the engine project runs every file; 'main': every file but these; 'side': only these.
 */
export const ENGINE_SIDE_FILES: string[] = [
  'test/examples/**/*.test.ts',
  'test/readme/**/*.test.ts',
  'test/packaging/**/*.test.ts',
  'test/groups/processes.test.ts',
  'test/schedulers/processes.test.ts',
  // hopper migrate: mostly waiting on forked migrators, BullMQ workers and the clock.
  'test/migrate/**/*.test.ts',
];
const part = process.env.HOPPER_TEST_PART ?? '';
if (!['', 'main', 'side'].includes(part)) throw new Error(`HOPPER_TEST_PART must be main, side or unset (every file), got "${part}".`);

/**
 * Test files of the engine's Redis tier run one at a time (Vitest's default on 2 cores): npm test
 * runs that tier beside the SQLite tier and the other packages already, and two files at a time
 * made timing-bound checks (a probe's wait during a 200,000-job clean, a sandbox's grace period)
 * fail under the CPU contention. The SQLite tier runs two at a time (`test:sqlite` passes
 * --maxWorkers=2). HOPPER_TEST_WORKERS overrides the default (1: one file at a time).
 */
const workers = Number(process.env.HOPPER_TEST_WORKERS ?? 1);
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
          include: part === 'side' ? ENGINE_SIDE_FILES : ['test/**/*.test.ts'],
          // The SQLite backend's own tests (no Redis) run in engine-sqlite.
          exclude: ['test/scale/**', 'test/cluster/**', 'test/backend-sqlite/**', ...(part === 'main' ? ENGINE_SIDE_FILES : [])],
          globalSetup: ['./test/helpers/global-redis.ts'],
          setupFiles: ['./test/helpers/setup-invariants.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'engine-sqlite',
          include: SQLITE_TEST_FILES,
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
