// The hot-path workloads the cost probe (cost.mjs) and the Functions A/B (functions-ab.mjs)
// measure: single adds (50 in flight, as the bench), then draining a queue at c=1, 10 and 100,
// and (Hopper only) at c=100 with the jobs spread over 1,000 groups.
// Each scenario's `run(lib, connection)` prepares its queue and returns { measure, close }: only
// `measure` is counted.

/**
 * The four hot-path scenarios over `jobs` jobs on queue `name`. `warm`: one add before measuring
 * (loads what a first call loads, e.g. the Functions library); `addOpts`: the single adds' options; `groups`: a fifth scenario, c=100 over 1,000 groups (Hopper only).
 */
export function hotPathScenarios(jobs, name, { warm = false, addOpts, groups = false } = {}) {
  async function addSingle(lib, connection) {
    const queue = new lib.Queue(name, { connection });
    await queue.waitUntilReady();
    if (warm) await queue.add('warm', {});
    return {
      measure: async () => {
        let next = 0;
        const lane = async () => {
          while (next < jobs) {
            next += 1;
            await queue.add('job', { n: next }, addOpts);
          }
        };
        await Promise.all(Array.from({ length: 50 }, lane));
      },
      close: () => queue.close(),
    };
  }

  async function processAll(lib, connection, concurrency, groupCount = 0) {
    const queue = new lib.Queue(name, { connection });
    for (let i = 0; i < jobs; i += 1_000) {
      const size = Math.min(1_000, jobs - i);
      const opts = (n) => (groupCount ? { removeOnComplete: true, group: { id: `g${n % groupCount}` } } : { removeOnComplete: true });
      await queue.addBulk(Array.from({ length: size }, (_, j) => ({ name: 'job', data: { n: i + j }, opts: opts(i + j) })));
    }
    return {
      measure: () =>
        new Promise((resolve, reject) => {
          let done = 0;
          const worker = new lib.Worker(name, async () => 1, { connection, concurrency });
          worker.on('error', reject);
          worker.on('completed', () => {
            done += 1;
            if (done === jobs) worker.close().then(resolve, reject);
          });
        }),
      close: () => queue.close(),
    };
  }

  const scenarios = [
    { id: 'add-single', run: addSingle },
    { id: 'process c=1', run: (lib, conn) => processAll(lib, conn, 1) },
    { id: 'process c=10', run: (lib, conn) => processAll(lib, conn, 10) },
    { id: 'process c=100', run: (lib, conn) => processAll(lib, conn, 100) },
  ];
  // Hopper only (BullMQ has no groups): the bench's groups scenario, jobs round-robin over 1,000 groups.
  if (groups) scenarios.push({ id: 'groups c=100', run: (lib, conn) => processAll(lib, conn, 100, 1_000) });
  return scenarios;
}
