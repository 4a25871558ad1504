// The daily digest: a job scheduler at 07:00 Europe/Paris (the founding guide's
// `upsertJobScheduler('daily-digest', { pattern: '0 7 * * *', tz: 'Europe/Paris' }, ...)`). The
// demo prints its next fire times (the dashboard's Schedulers view previews them too, DST
// included) and triggers one run now so there is something to see.
import { nextFireTimes } from 'hopper-queue';
import { sendBatch } from './services.mjs';

const REPEAT = { pattern: '0 7 * * *', tz: 'Europe/Paris' };

/** @type {import('./main.mjs').Scenario} */
export const digest = {
  name: 'digest',
  queues: ['digest'],
  async start(ctx) {
    const stats = { sent: 0 };
    const queue = ctx.queue('digest');
    await queue.upsertJobScheduler('daily-digest', REPEAT, { name: 'daily-digest', data: { list: 'all-subscribers' } });
    ctx.worker('digest', async (job, _token, signal) => {
      const result = await sendBatch(250, signal);
      stats.sent += result.sent;
      return result;
    });
    const next = nextFireTimes(REPEAT, { from: Date.now(), count: 2 }).map((t) => new Date(t).toISOString().replace(':00.000', ''));
    ctx.log(`daily-digest: "${REPEAT.pattern}" in ${REPEAT.tz}, next runs ${next.join(', ')} (UTC); triggering one run now`);
    await queue.triggerJobScheduler('daily-digest');
    return {
      summary: () => `07:00 Europe/Paris, next ${next[0]} UTC; ${stats.sent} digests sent by the triggered run`,
    };
  },
};
