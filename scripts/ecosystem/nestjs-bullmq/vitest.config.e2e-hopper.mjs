// @nestjs/bullmq's e2e config (packages/bullmq/vitest.config.e2e.mts) with the implementation
// swapped the way a migrating user swaps it: the suite's `../lib/index.js` (the @nestjs/bullmq
// package under test) and `@nestjs/bullmq` resolve to hopper-queue-nestjs, `bullmq` to hopper-queue.
// Both are installed from their `npm pack` tarballs, so they use the suite's own @nestjs/* copies.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globals: true,
    root: './',
    include: ['e2e/**/*.e2e-spec.ts'],
    alias: [
      { find: /^\.\.\/lib\/index\.js$/, replacement: 'hopper-queue-nestjs' },
      { find: /^@nestjs\/bullmq$/, replacement: 'hopper-queue-nestjs' },
      { find: /^bullmq$/, replacement: 'hopper-queue' },
    ],
  },
});
