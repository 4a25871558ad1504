// A CommonJS module in both builds (plain JavaScript, so that Node and vitest load it as it is):
// `require` of this package, resolving from where it is installed, without `import.meta.url`,
// which the CommonJS build cannot contain.

/** Node's `require`, relative to this package. @type {NodeJS.Require} */
const requireHere = require;

module.exports = { requireHere };
