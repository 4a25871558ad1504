// A streamed LLM-style generation: each run is a chain of turns (`job.continueWith`); every turn
// streams its tokens (`job.stream`, readable live in the dashboard's job page or over SSE), reports
// its cost (`job.reportCost`) and goes on until the run's budget (`maxCost`) stops it. Cancel the
// active `turn` job from the dashboard (Cancel on its job page) to stop a run: its signal aborts
// the model at once and no turn follows. The demo also cancels one run itself, as that button does.
import { streamModel } from './services.mjs';

const PROMPTS = ['Summarise the Q3 supplier invoices', 'Draft the stock report', 'Explain the DST rule of the digest'];
const MAX_COST = 2_000; // tokens per run

/** @type {import('./main.mjs').Scenario} */
export const generation = {
  name: 'generation',
  queues: ['llm'],
  async start(ctx) {
    const stats = { runs: 0, tokens: 0, budget: 0, cancelled: 0, turns: 0 };
    const queue = ctx.queue('llm');
    // Runs and costs need the backend's run records: refused (BackendUnsupportedError) where missing.
    await queue.getRun('probe');
    ctx
      .worker(
        'llm',
        async (job, _token, signal) => {
          const { runId, prompt } = job.data;
          const turn = Number(job.id.split(':').at(-1));
          let tokens = 0;
          for await (const token of streamModel(prompt, turn, signal)) {
            await job.stream.write(token);
            tokens++;
          }
          await job.stream.end();
          stats.tokens += tokens;
          stats.turns++;
          // Each token costs 20 "units": a turn is ~400, so a run stops at its 5th or 6th turn.
          await job.reportCost(tokens * 20);
          await job.continueWith({ runId, prompt }, { maxTurns: 50, maxCost: MAX_COST });
          return { tokens };
        },
        { concurrency: 3 },
      )
      .on('failed', (job, err) => {
        if (/maxCost/.test(err.message)) stats.budget++;
        else if (err.name === 'CancelledError') stats.cancelled++;
        else return;
        ctx.log(`${job.data.runId} ended at turn ${job.id.split(':').at(-1)}: ${err.name}: ${err.message}`);
      });

    let n = 0;
    await ctx.every(4_000, async () => {
      const runId = `run-${++n}`;
      const job = await queue.add('turn', { runId, prompt: PROMPTS[n % PROMPTS.length] }, { jobId: `${runId}:0` });
      ctx.track('llm', job.id);
      stats.runs++;
      // The second run is cancelled by "the user" during its second turn.
      if (n === 2) {
        ctx.later(2_500, async () => {
          const answer = await queue.cancelRun(runId, 'stopped by the user');
          ctx.log(`cancelRun(${runId}): ${JSON.stringify(answer)} (the dashboard's Cancel on an active turn does the same)`);
        });
      }
    });
    return {
      summary: () =>
        `${stats.runs} runs, ${stats.turns} turns, ${stats.tokens} tokens streamed; ${stats.budget} stopped by their budget (maxCost ${MAX_COST}), ` +
        `${stats.cancelled} cancelled`,
    };
  },
};
