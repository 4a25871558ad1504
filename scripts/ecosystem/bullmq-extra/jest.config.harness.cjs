// bullmq-extra's own jest.config.js (ts-jest, type checking on), with one change: `testcontainers`
// is the stub beside this file (a local redis-server instead of Docker). run.sh copies this file
// into the suite's work tree and passes it with --config.
const upstream = require('./jest.config.js');

module.exports = {
  ...upstream,
  moduleNameMapper: { '^testcontainers$': '<rootDir>/testcontainers-stub.cjs' },
};
