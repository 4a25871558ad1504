// A CommonJS module in both builds (plain JavaScript, so that Node, vitest and Jest load it as it
// is): the folder this file is in (src, dist or dist/cjs), without `import.meta.url`, which the
// CommonJS build cannot contain. static.ts finds the built web UI (dist/ui) from it.

/** The absolute path of the folder holding this module. @type {string} */
const here = __dirname;

module.exports = { here };
