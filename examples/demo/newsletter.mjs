// A newsletter fan-out over groups: each tenant's campaign job splits its recipients into batches
// added with `group: { id: tenant }`. Groups take turns (round-robin, at most 2 batches of a
// tenant at once), so a small tenant's campaign is not stuck behind a big one's backlog.
import { sendBatch } from './services.mjs';

const TENANTS = [
  { id: 'bigshop', recipients: 2_400 },
  { id: 'bakery', recipients: 200 },
  { id: 'florist', recipients: 300 },
];
const BATCH = 100;

/** @type {import('./main.mjs').Scenario} */
export const newsletter = {
  name: 'newsletter',
  queues: ['newsletter'],
  async start(ctx) {
    const stats = { campaigns: 0, emails: 0, batches: 0, waits: {} };
    const queue = ctx.queue('newsletter');
    await queue.setGroupDefaults({ concurrency: 2 });
    ctx
      .worker(
        'newsletter',
        async (job, _token, signal) => {
          if (job.name === 'campaign') {
            // The fan-out: one job per batch of recipients, in the tenant's group.
            const { tenant, recipients } = job.data;
            const batches = Math.ceil(recipients / BATCH);
            const added = await queue.addBulk(
              Array.from({ length: batches }, (_, i) => ({
                name: 'send-batch',
                data: { tenant, batch: i, recipients: Math.min(BATCH, recipients - i * BATCH) },
                opts: { group: { id: tenant }, attempts: 3 },
              })),
            );
            for (const batch of added) ctx.track('newsletter', batch.id);
            return { batches };
          }
          (stats.waits[job.data.tenant] ??= []).push(Date.now() - job.timestamp);
          return sendBatch(job.data.recipients, signal);
        },
        { concurrency: 4 },
      )
      .on('completed', (job, result) => {
        if (job.name !== 'send-batch') return;
        stats.batches++;
        stats.emails += result.sent;
      });
    // Every 6 s all three tenants launch a campaign at the same moment, the big one first.
    await ctx.every(6_000, async () => {
      for (const tenant of TENANTS) {
        const job = await queue.add('campaign', { tenant: tenant.id, recipients: tenant.recipients }, { group: { id: tenant.id } });
        ctx.track('newsletter', job.id);
        stats.campaigns++;
      }
    });
    const avg = (xs = []) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
    return {
      summary: () =>
        `${stats.campaigns} campaigns, ${stats.emails} emails in ${stats.batches} batches; average wait of a batch: ` +
        TENANTS.map((t) => `${t.id} (${t.recipients / BATCH} batches) ${avg(stats.waits[t.id])} ms`).join(', ') +
        ' (groups take turns)',
    };
  },
};
