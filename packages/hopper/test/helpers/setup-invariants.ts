/**
 * Engine-test setup. The invariant audit itself runs in `useHopper()`'s afterEach, so every test
 * that uses the Hopper environment is audited; this file only makes unhandled rejections fail
 * the run loudly instead of passing silently.
 */
process.on('unhandledRejection', (reason) => {
  throw reason instanceof Error ? reason : new Error(String(reason));
});
