// Bull Board's default jest project (packages/api/jest.config.default.js: the suite outside its
// BullMQ version matrix), without the two spec files that test only Bull 4's adapter
// (bull-adapter, bull-scheduled-job-removal: nothing of BullMQ in them). Mixed files keep their
// Bull cases.
//
// SUITE_IMPL=hopper swaps BullMQ for Hopper the way a migrating application swaps it: `bullmq`
// resolves to hopper-queue, and Bull Board's BullMQAdapter (from '@bull-board/api/bullMQAdapter',
// or the package's own source in tests/queueAdapters) to HopperAdapter (hopper-swap/bullMQAdapter.cjs).
// Hopper's packages are installed from their `npm pack` tarballs, and jest loads their CommonJS
// builds as it finds them (no transform of node_modules: what a jest user gets by default).
// ts-jest's type check is off for the swap: Hopper's types are not BullMQ's, and a type
// difference is not a behaviour the suite tests.
const base = require('./jest.config.default.js');

const config = {
  ...base,
  testPathIgnorePatterns: [
    ...base.testPathIgnorePatterns,
    '<rootDir>/tests/api/bull-adapter.spec.ts',
    '<rootDir>/tests/api/bull-scheduled-job-removal.spec.ts',
  ],
};

if (process.env.SUITE_IMPL === 'hopper') {
  const adapter = '<rootDir>/hopper-swap/bullMQAdapter.cjs';
  Object.assign(config, {
    displayName: 'bull-board api on hopper',
    moduleNameMapper: {
      '^bullmq$': 'hopper-queue',
      '^@bull-board/api/bullMQAdapter$': adapter,
      '^\\.\\./\\.\\./src/queueAdapters/bullMQ$': adapter,
    },
    transform: {
      '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    },
  });
}

module.exports = config;
