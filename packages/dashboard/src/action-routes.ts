/**
 * The dashboard's actions (POST, operator role; CSRF-checked and audited by the dispatcher): retry,
 * promote, remove, cancel and duplicate a job, bulk actions, pause/resume/clean a queue, its
 * settings, scheduler and group actions, and replaying dead letters.
 */
import type { Queue } from 'hopper-queue';
import { HttpError } from './security.js';
import { idsOf, type AddRoute, type RouteContext } from './http.js';
import { duplicateOptions } from './views.js';

/** Registers the action routes. */
export function actionRoutes(route: AddRoute, { queueOf, jobOf }: RouteContext): void {
  route(
    'POST',
    'api/queues/:queue/jobs/:id/retry',
    async ({ params }) => {
      const job = await jobOf(await queueOf(params), params.id);
      const state = await job.getState();
      if (state !== 'failed' && state !== 'completed')
        throw new HttpError(409, `Job "${params.id}" is ${state}: only failed or completed jobs are retried.`);
      await job.retry(state);
      return { retried: params.id };
    },
    'retry',
  );
  route(
    'POST',
    'api/queues/:queue/jobs/:id/promote',
    async ({ params }) => {
      await (await jobOf(await queueOf(params), params.id)).promote();
      return { promoted: params.id };
    },
    'promote',
  );
  route(
    'POST',
    'api/queues/:queue/jobs/:id/remove',
    async ({ params }) => {
      const removed = await (await queueOf(params)).remove(params.id);
      if (removed === 0) throw new HttpError(404, `No job "${params.id}".`);
      return { removed: params.id };
    },
    'remove',
  );
  route(
    'POST',
    'api/queues/:queue/jobs/:id/cancel',
    async ({ params, body }) => {
      const reason = typeof body.reason === 'string' && body.reason !== '' ? body.reason.slice(0, 500) : 'cancelled from the dashboard';
      return { outcome: await (await queueOf(params)).cancelJob(params.id, reason) };
    },
    'cancel',
  );
  route('POST', 'api/queues/:queue/pause', async ({ params }) => (await (await queueOf(params)).pause(), { paused: true }), 'pause');
  route('POST', 'api/queues/:queue/resume', async ({ params }) => (await (await queueOf(params)).resume(), { paused: false }), 'resume');
  route(
    'POST',
    'api/queues/:queue/clean',
    async ({ params, body }) => {
      const state = typeof body.state === 'string' ? body.state : 'completed';
      if (!['completed', 'failed', 'waiting', 'prioritized', 'delayed'].includes(state))
        throw new HttpError(400, `state "${state}" cannot be cleaned.`);
      const grace = typeof body.graceMs === 'number' && body.graceMs >= 0 ? body.graceMs : 0;
      const removed = await (await queueOf(params)).clean(grace, 1000, state as 'completed');
      return { removed: removed.length };
    },
    'clean',
  );
  route(
    'POST',
    'api/queues/:queue/schedulers/:id/:op',
    async ({ params }) => {
      const queue = await queueOf(params);
      if (params.op === 'pause') return { changed: await queue.pauseJobScheduler(params.id) };
      if (params.op === 'resume') return { changed: await queue.resumeJobScheduler(params.id) };
      if (params.op === 'trigger') return { jobId: (await queue.triggerJobScheduler(params.id))?.id ?? null };
      throw new HttpError(404, `Unknown scheduler action "${params.op}" (pause, resume, trigger).`);
    },
    'scheduler',
  );
  route(
    'POST',
    'api/queues/:queue/dead-letters/replay',
    async ({ params, body }) => {
      const ids = Array.isArray(body.ids) ? body.ids.filter((x): x is string => typeof x === 'string').slice(0, 10_000) : undefined;
      return (await queueOf(params)).replayDeadLetters(ids ? { ids } : {});
    },
    'replay',
  );

  route(
    'POST',
    'api/queues/:queue/jobs/:id/duplicate',
    async ({ params }) => {
      const queue = await queueOf(params);
      const job = await jobOf(queue, params.id);
      const copy = await queue.add(job.name, job.data, duplicateOptions(job.opts));
      return { duplicated: params.id, jobId: copy.id };
    },
    'duplicate',
  );
  /** One job action by name (the single-job routes' rules), for bulk actions. */
  const act = async (queue: Queue, action: string, id: string): Promise<void> => {
    if (action === 'retry') {
      const job = await jobOf(queue, id);
      const state = await job.getState();
      if (state !== 'failed' && state !== 'completed')
        throw new HttpError(409, `Job "${id}" is ${state}: only failed or completed jobs are retried.`);
      await job.retry(state);
    } else if (action === 'promote') await (await jobOf(queue, id)).promote();
    else if (action === 'remove') {
      if ((await queue.remove(id)) === 0) throw new HttpError(404, `No job "${id}".`);
    } else if (action === 'cancel') {
      const outcome = await queue.cancelJob(id, 'cancelled from the dashboard');
      if (outcome === 'missing') throw new HttpError(404, `No job "${id}".`);
    } else throw new HttpError(400, `action must be retry, promote, remove or cancel, not "${action}".`);
  };
  route(
    'POST',
    'api/queues/:queue/bulk',
    async ({ params, body }) => {
      const queue = await queueOf(params);
      const action = typeof body.action === 'string' ? body.action : '';
      if (!['retry', 'promote', 'remove', 'cancel'].includes(action))
        throw new HttpError(400, `action must be retry, promote, remove or cancel, not "${action}".`);
      const ids = idsOf(body);
      let done = 0;
      const failed: { id: string; error: string }[] = [];
      for (const id of ids) {
        try {
          await act(queue, action, id);
          done++;
        } catch (error) {
          failed.push({ id, error: (error as Error).message });
        }
      }
      return { action, done, failed };
    },
    'bulk',
  );
  route(
    'POST',
    'api/queues/:queue/settings',
    async ({ params, body }) => {
      const queue = await queueOf(params);
      if ('globalConcurrency' in body) {
        const c = body.globalConcurrency;
        if (c === null) await queue.removeGlobalConcurrency();
        else if (typeof c === 'number' && Number.isInteger(c) && c > 0) await queue.setGlobalConcurrency(c);
        else throw new HttpError(400, 'globalConcurrency must be a positive integer, or null to remove it.');
      }
      if ('rateLimit' in body) {
        const r = body.rateLimit as { max?: unknown; duration?: unknown } | null;
        if (r === null) await queue.removeGlobalRateLimit();
        else if (
          typeof r === 'object' &&
          Number.isInteger(r.max) &&
          Number.isInteger(r.duration) &&
          (r.max as number) > 0 &&
          (r.duration as number) > 0
        )
          await queue.setGlobalRateLimit(r.max as number, r.duration as number);
        else throw new HttpError(400, 'rateLimit must be { max, duration } (positive integers, duration in ms), or null to remove it.');
      }
      const [globalConcurrency, rateLimit] = await Promise.all([queue.getGlobalConcurrency(), queue.getGlobalRateLimit()]);
      return { globalConcurrency, rateLimit };
    },
    'settings',
  );
  route(
    'POST',
    'api/queues/:queue/groups/:group/:op',
    async ({ params }) => {
      const queue = await queueOf(params);
      if (params.op === 'pause') return { changed: await queue.pauseGroup(params.group) };
      if (params.op === 'resume') return { changed: await queue.resumeGroup(params.group) };
      throw new HttpError(404, `Unknown group action "${params.op}" (pause, resume).`);
    },
    'group',
  );
}
