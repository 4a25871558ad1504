// The invoice pipeline (the founding guide's FinTech case): each upload adds a flow
// OCR -> NLP -> validate -> index, one queue and one worker per stage with its own concurrency.
// OCR is rate-limited like a vendor quota, premium tenants go first, transient OCR errors are
// retried with exponential backoff, and invalid invoices fail with UnrecoverableError into a
// dead-letter queue (replayable from the dashboard or `hopper dlq replay`).
import { UnrecoverableError } from 'hopper-queue';
import { nlpClassify, ocrExtract, work } from './services.mjs';

const TENANTS = [
  { id: 'acme', premium: true },
  { id: 'globex', premium: true },
  { id: 'initech', premium: false },
  { id: 'umbrella', premium: false },
  { id: 'hooli', premium: false },
];

/** @type {import('./main.mjs').Scenario} */
export const invoices = {
  name: 'invoices',
  queues: ['invoice-ocr', 'invoice-nlp', 'invoice-validate', 'invoice-index', 'invoice-dead'],
  async start(ctx) {
    const stats = { uploaded: 0, indexed: 0, dead: 0, ocrRetries: 0, wait: { premium: [], standard: [] } };
    const ocr = ctx.queue('invoice-ocr');
    // The vendor's quota: 8 OCR calls a second across every worker (exact, a sliding window).
    // A backend without rate limits or dead letters (SQLite today) runs the rest of the pipeline.
    let limited = true;
    let deadLetter = { queue: 'invoice-dead' };
    await ocr.setGlobalRateLimit(8, 1_000).catch((err) => {
      if (err.name !== 'BackendUnsupportedError') throw err;
      limited = false;
      ctx.log(`running without the OCR rate limit: ${err.message}`);
    });
    const flows = ctx.flowProducer();

    ctx
      .worker(
        'invoice-ocr',
        async (job, _token, signal) => {
          const tier = job.data.premium ? 'premium' : 'standard';
          if (job.attemptsMade === 0) stats.wait[tier].push(Date.now() - job.timestamp);
          return ocrExtract(job.data, signal);
        },
        { concurrency: 4 },
      )
      .on('failed', (job) => {
        if (job && job.attemptsMade < (job.opts.attempts ?? 1)) stats.ocrRetries++;
      });
    ctx.worker('invoice-nlp', async (job, _token, signal) => nlpClassify(Object.values(await job.getChildrenValues())[0].text, signal), {
      concurrency: 3,
    });
    ctx
      .worker(
        'invoice-validate',
        async (job, _token, signal) => {
          const parsed = Object.values(await job.getChildrenValues())[0];
          await work(20, signal);
          if (!(parsed.total > 0))
            throw new UnrecoverableError(`invoice ${job.data.invoiceId}: total ${parsed.total} is not a positive amount`);
          return parsed;
        },
        { concurrency: 2 },
      )
      .on('failed', (job, err) => {
        if (err.name === 'UnrecoverableError') stats.dead++;
      });
    ctx.worker(
      'invoice-index',
      async (job, _token, signal) => {
        await work(30, signal);
        stats.indexed++;
        return { indexed: job.data.invoiceId };
      },
      { concurrency: 2 },
    );

    let n = 0;
    const upload = async () => {
      const tenant = TENANTS[n % TENANTS.length];
      const invoiceId = `inv-${++n}`;
      // One invoice in eight is unreadable: a negative total the validator refuses.
      const data = { invoiceId, tenant: tenant.id, premium: tenant.premium, amount: n % 8 === 0 ? -42 : 50 + ((n * 37) % 2_000) };
      const stage = (name, queueName, children, opts = {}) => ({
        name,
        queueName,
        data,
        opts: { failParentOnFailure: true, ...opts },
        ...(children ? { children: [children] } : {}),
      });
      const ocrNode = stage('ocr', 'invoice-ocr', undefined, {
        priority: tenant.premium ? 1 : 10,
        attempts: 5,
        backoff: { type: 'exponential', delay: 100 },
      });
      const tree = stage(
        'index',
        'invoice-index',
        stage('validate', 'invoice-validate', stage('nlp', 'invoice-nlp', ocrNode), deadLetter ? { deadLetter } : {}),
      );
      delete tree.opts.failParentOnFailure;
      const flow = await flows.add(tree).catch((err) => {
        if (err.name !== 'BackendUnsupportedError' || !deadLetter) throw err;
        ctx.log(`running without the dead-letter queue (invalid invoices stay in failed): ${err.message}`);
        deadLetter = undefined;
        delete tree.children[0].opts.deadLetter;
        return flows.add(tree);
      });
      ctx.track('invoice-index', flow.job.id);
      stats.uploaded++;
    };
    // A burst of uploads every 2 s (the evening peak), so OCR has a backlog to order by tier.
    await ctx.every(2_000, async () => {
      for (let i = 0; i < 12; i++) await upload();
    });

    const avg = (xs) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
    return {
      summary: () =>
        `${stats.uploaded} uploaded, ${stats.indexed} indexed, ${stats.dead} ${deadLetter ? 'dead-lettered' : 'failed'} (invalid), ${stats.ocrRetries} OCR retries; ` +
        `${limited ? 'OCR <= 8/s; ' : ''}wait for OCR: premium ${avg(stats.wait.premium)} ms, standard ${avg(stats.wait.standard)} ms`,
    };
  },
};
