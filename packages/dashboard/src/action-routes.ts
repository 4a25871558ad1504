/**
 * The dashboard's actions (POST, operator role; CSRF-checked and audited by the dispatcher): retry,
 * promote, remove, cancel and duplicate a job, bulk actions, pause/resume/clean a queue, its
 * settings, scheduler and group actions, and replaying dead letters.
 */
import type { Queue } from 'hopper-queue';
import { HttpError } from './security.js';
import { idsOf, type AddRoute, type RouteContext } from './http.js';
import { duplicateOptions, scanJobs } from './views.js';

/** Dead letters examined per replay request without ids (at most this many replayed per request). */
export const MAX_REPLAY_SCAN = 1000;

/** An optional text filter of a body (at most 200 characters). */
function textFilter(value: unknown, name: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string' || value.length > 200) throw new HttpError(400, `${name} must be a text of at most 200 characters.`);
  return value;
}

/** Registers the action routes. */
export function actionRoutes(route: AddRoute, { queueOf, jobOf, redactor }: RouteContext): void {
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
      if (body.reason !== undefined && typeof body.reason !== 'string') throw new HttpError(400, 'reason must be a text.');
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
      const state = body.state ?? 'completed';
      if (typeof state !== 'string' || !['completed', 'failed', 'waiting', 'prioritized', 'delayed'].includes(state))
        throw new HttpError(
          400,
          `state must be completed, failed, waiting, prioritized or delayed, not ${JSON.stringify(state).slice(0, 50)}.`,
        );
      const grace = body.graceMs ?? 0;
      if (!Number.isSafeInteger(grace) || (grace as number) < 0)
        throw new HttpError(400, 'graceMs must be an integer of milliseconds from 0.');
      const removed = await (await queueOf(params)).clean(grace as number, 1000, state as 'completed');
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
      const queue = await queueOf(params);
      // Chosen dead letters: at most 1,000 ids, as for every bulk action.
      if (body.ids !== undefined) return { ...(await queue.replayDeadLetters({ ids: idsOf(body) })) };
      // Otherwise one bounded slice of the dead-letter queue: follow `cursor` for the next one.
      const state = body.state ?? 'waiting';
      if (state !== 'waiting' && state !== 'completed' && state !== 'failed')
        throw new HttpError(400, 'state must be waiting, completed or failed (where the dead letters are).');
      const cursor = body.cursor ?? 0;
      const scan = body.scan ?? MAX_REPLAY_SCAN;
      if (!Number.isSafeInteger(cursor) || (cursor as number) < 0)
        throw new HttpError(400, 'cursor must be an integer from 0 (the one the previous slice returned).');
      if (!Number.isInteger(scan) || (scan as number) < 1 || (scan as number) > MAX_REPLAY_SCAN)
        throw new HttpError(400, `scan must be an integer from 1 to ${MAX_REPLAY_SCAN.toLocaleString('en')}.`);
      const name = textFilter(body.name, 'name');
      const reason = textFilter(body.reason, 'reason');
      const page = await scanJobs(
        queue,
        state,
        cursor as number,
        scan as number,
        true,
        (job) =>
          job.deadLetterOrigin !== undefined &&
          (name === '' || job.name === name) &&
          (reason === '' || String(redactor.maybeText(job.failedReason, 'failedReason') ?? '').includes(reason))
            ? (job.id as string)
            : undefined,
        MAX_REPLAY_SCAN,
      );
      const result = page.matches.length > 0 ? await queue.replayDeadLetters({ ids: page.matches }) : { replayed: 0, refused: [] };
      // The replayed dead letters left the list: the next slice starts that many places earlier.
      const next = page.cursor === null ? null : page.cursor - result.replayed;
      return { ...result, ids: page.matches, cursor: next, scanned: page.scanned, total: page.total };
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
