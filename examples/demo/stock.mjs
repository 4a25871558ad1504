// Stock sync: one queue per marketplace, each with the rate limit of that marketplace's API, each
// fed by a job scheduler (every 5 minutes in production, every 3 s here). One marketplace is down:
// its jobs fail and retry on their own queue while the others go on at full speed.
import { pushStock } from './services.mjs';

const MARKETPLACES = [
  { name: 'amazon', limit: 20, down: false },
  { name: 'ebay', limit: 10, down: false },
  { name: 'zalando', limit: 5, down: true },
];
const SKUS = 6;

/** @type {import('./main.mjs').Scenario} */
export const stock = {
  name: 'stock',
  queues: MARKETPLACES.map((m) => `stock-${m.name}`),
  async start(ctx) {
    const stats = Object.fromEntries(MARKETPLACES.map((m) => [m.name, { syncs: 0, ok: 0, failed: 0, lastError: '' }]));
    for (const marketplace of MARKETPLACES) {
      const name = `stock-${marketplace.name}`;
      const queue = ctx.queue(name);
      // Idempotent by id: every replica may upsert it at boot, there is still one schedule.
      await queue.upsertJobScheduler(
        'sync-stock',
        { every: ctx.fast ? 3_000 : 300_000 },
        { name: 'sync', data: { marketplace: marketplace.name }, opts: { removeOnComplete: { count: 200 } } },
      );
      const s = stats[marketplace.name];
      ctx
        .worker(
          name,
          async (job, _token, signal) => {
            if (job.name === 'sync') {
              // A sync fans out one update per SKU that changed, on the same (rate-limited) queue.
              s.syncs++;
              const added = await queue.addBulk(
                Array.from({ length: SKUS }, (_, i) => ({
                  name: 'update-sku',
                  data: { sku: `SKU-${100 + i}`, qty: Math.floor(Math.random() * 50) },
                  opts: { attempts: 3, backoff: { type: 'exponential', delay: 200 } },
                })),
              );
              for (const job of added) ctx.track(name, job.id);
              return { updates: SKUS };
            }
            return pushStock(marketplace, job.data.sku, signal);
          },
          { concurrency: 4, limiter: { max: marketplace.limit, duration: 1_000 } },
        )
        .on('completed', (job) => {
          if (job.name === 'update-sku') s.ok++;
        })
        .on('failed', (job, err) => {
          if (job?.name === 'update-sku' && job.attemptsMade >= job.opts.attempts) {
            s.failed++;
            s.lastError = err.message;
          }
        });
    }
    return {
      summary: () =>
        MARKETPLACES.map((m) => {
          const s = stats[m.name];
          return `${m.name} (${m.limit}/s) ${s.syncs} syncs, ${s.ok} SKUs ok, ${s.failed} failed${s.failed ? ` (${s.lastError.replace(`${m.name}: `, '')})` : ''}`;
        }).join('; '),
    };
  },
};
