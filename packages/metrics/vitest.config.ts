import { defineConfig } from 'vitest/config';

// The metrics collector and exporter against the same throwaway Redis as the engine's tests (REDIS_URL when
// set), each test on its own key prefix.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    include: ['test/**/*.test.ts'],
    globalSetup: ['../hopper/test/helpers/global-redis.ts'],
  },
});
