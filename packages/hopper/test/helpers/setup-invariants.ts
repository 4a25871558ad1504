/**
 * Engine-test setup. The invariant audit itself runs in `useHopper()`'s afterEach, so every test
 * that uses the Hopper environment is audited; this file only makes unhandled rejections fail
 * the run loudly instead of passing silently.
 */
// Once per process (a worker may run several files when isolation is off: vitest --isolate=false).
const installed = Symbol.for('hopper.test.unhandledRejection');
const holder = globalThis as { [installed]?: true };
if (!holder[installed]) {
  holder[installed] = true;
  process.on('unhandledRejection', (reason) => {
    throw reason instanceof Error ? reason : new Error(String(reason));
  });
}
