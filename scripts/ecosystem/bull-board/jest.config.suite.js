// Bull Board's default jest project (packages/api/jest.config.default.js: the suite outside its
// BullMQ version matrix), without the two spec files that test only Bull 4's adapter
// (bull-adapter, bull-scheduled-job-removal: nothing of BullMQ in them). Mixed files keep their
// Bull cases.
//
// SUITE_IMPL=hopper swaps BullMQ for Hopper the way a migrating application swaps it: `bullmq`
// resolves to hopper-queue, and Bull Board's BullMQAdapter (from '@bull-board/api/bullMQAdapter',
// or the package's own source in tests/queueAdapters) to HopperAdapter (hopper-swap/bullMQAdapter.cjs).
// Hopper's packages are installed from their `npm pack` tarballs. hopper-queue-bull-board and
// hopper-queue-dashboard (and temporal-polyfill, which hopper-queue uses) ship ES modules only and jest runs this suite as CommonJS, so jest compiles
// those two to CommonJS (what a jest user of an ESM-only package configures); hopper-queue ships
// CommonJS. ts-jest's type check is off for the swap: Hopper's types are not BullMQ's, and a type
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
      '^.+\\.js$': [
        'ts-jest',
        { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022', esModuleInterop: true } },
      ],
    },
    transformIgnorePatterns: ['/node_modules/(?!(hopper-queue-bull-board|hopper-queue-dashboard|temporal-polyfill|temporal-utils)/)'],
  });
}

module.exports = config;
