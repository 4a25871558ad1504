/**
 * The one place Hopper takes `Temporal` from: temporal-polyfill, which ships ES modules only.
 * The ESM build imports it as a dependency; the CommonJS build replaces this module's `require`
 * with a CommonJS copy of the same version bundled at build time (scripts/write-cjs-package.mjs),
 * so that `require('hopper-queue')` loads everywhere CommonJS is, Jest's module system included,
 * which cannot `require()` an ES module.
 */
export { Temporal } from 'temporal-polyfill';
