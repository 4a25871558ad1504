import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'engine',
          include: ['test/**/*.test.ts'],
          exclude: ['test/scale/**', 'test/cluster/**'],
          globalSetup: ['./test/helpers/global-redis.ts'],
          setupFiles: ['./test/helpers/setup-invariants.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'scale',
          include: ['test/scale/**/*.test.ts'],
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
