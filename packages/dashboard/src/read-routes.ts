/**
 * The dashboard's read routes (GET, viewer role): queues, jobs and one job in full, search, the
 * per-minute series and latency, groups, dead letters, settings, schedulers (and a preview of
 * their next fire times) and the audit log.
 */
import { JOB_STATES, nextFireTimes, type JobState } from 'hopper-queue';
import { HttpError, redactDeep } from './security.js';
import { intParam, jobView, stateParam, type AddRoute, type RouteContext } from './http.js';
import { MAX_SCAN, SEARCH_FIELDS, latency, matcher, perMinuteSeries, scanJobs, storedOutput, type SearchField } from './views.js';

/** Registers the read routes. */
export function readRoutes(route: AddRoute, { admin, redact, overview, queueOf, jobOf }: RouteContext): void {
  route('GET', 'api/queues', async () => overview());
  route('GET', 'api/queues/:queue/jobs', async ({ url, params }) => {
    const queue = await queueOf(params);
    const state = url.searchParams.get('state') ?? 'waiting';
    if (!(JOB_STATES as readonly string[]).includes(state)) throw new HttpError(400, `state must be one of ${JOB_STATES.join(', ')}.`);
    const offset = intParam(url, 'offset', 0, 10_000_000);
    const limit = intParam(url, 'limit', 50, 500);
    const order = url.searchParams.get('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc')
      throw new HttpError(400, `order must be asc (oldest first) or desc (newest first), not "${order}".`);
    const total = (await queue.getJobCounts(state as JobState))[state] ?? 0;
    const jobs = limit === 0 ? [] : await queue.getJobs(state as JobState, offset, offset + limit - 1, order === 'asc');
    return { state, offset, limit, order, total, jobs: jobs.map((j) => jobView(j, state, redact)) };
  });
  route('GET', 'api/queues/:queue/jobs/:id', async ({ params }) => {
    const queue = await queueOf(params);
    const job = await jobOf(queue, params.id);
    const [state, logs, steps, pending, processed] = await Promise.all([
      job.getState(),
      queue.getJobLogs(params.id, -100, -1),
      job.getSteps(),
      queue.getDependencies(params.id, 'pending', 0, 49),
      queue.getDependencies(params.id, 'processed', 0, 49),
    ]);
    return {
      ...jobView(job, state, redact),
      logs: logs.logs,
      logCount: logs.count,
      steps: redactDeep(steps, redact),
      output: await storedOutput(queue, params.id, (value) => redactDeep(value, redact)),
      children: {
        pending: pending.items.map((i) => i.id),
        pendingTotal: pending.total,
        processed: processed.items.map((i) => i.id),
        processedTotal: processed.total,
      },
    };
  });
  route('GET', 'api/queues/:queue/search', async ({ url, params }) => {
    const queue = await queueOf(params);
    const q = url.searchParams.get('q') ?? '';
    if (q === '' || q.length > 200) throw new HttpError(400, 'q must be the text to search for (1 to 200 characters).');
    const field = (url.searchParams.get('field') ?? 'any') as SearchField;
    if (!SEARCH_FIELDS.includes(field)) throw new HttpError(400, `field must be one of ${SEARCH_FIELDS.join(', ')}.`);
    const state = stateParam(url);
    const cursor = intParam(url, 'cursor', 0, 100_000_000);
    const scan = intParam(url, 'scan', 1000, MAX_SCAN);
    // An exact id is found at once, whatever the state and the queue's size.
    const exact = cursor === 0 && (field === 'any' || field === 'id') ? await queue.getJob(q) : undefined;
    const exactState = exact ? await exact.getState() : undefined;
    const page = await scanJobs(queue, state, cursor, scan, url.searchParams.get('order') === 'asc', matcher(field, q));
    const matches = page.matches.filter((j) => j.id !== exact?.id).map((j) => jobView(j, state, redact));
    if (exact) matches.unshift(jobView(exact, exactState, redact));
    return { state, field, q, cursor: page.cursor, scanned: page.scanned, total: page.total, jobs: matches };
  });
  route('GET', 'api/queues/:queue/series', async ({ url, params }) => {
    const queue = await queueOf(params);
    const minutes = intParam(url, 'minutes', 60, 1440);
    const [series, lat] = await Promise.all([perMinuteSeries(queue, Math.max(1, minutes)), latency(queue)]);
    return { ...series, latency: lat };
  });
  route('GET', 'api/queues/:queue/groups', async ({ url, params }) => {
    const queue = await queueOf(params);
    const offset = intParam(url, 'offset', 0, 10_000_000);
    const limit = intParam(url, 'limit', 50, 500);
    const [total, groups] = await Promise.all([queue.getGroupsCount(), limit === 0 ? [] : queue.getGroups(offset, offset + limit - 1)]);
    return { total, offset, limit, groups };
  });
  route('GET', 'api/queues/:queue/dead-letters', async ({ url, params }) => {
    const queue = await queueOf(params);
    const name = url.searchParams.get('name') ?? '';
    const reason = url.searchParams.get('reason') ?? '';
    const state = stateParam(url);
    const cursor = intParam(url, 'cursor', 0, 100_000_000);
    const scan = intParam(url, 'scan', 1000, MAX_SCAN);
    const page = await scanJobs(
      queue,
      state,
      cursor,
      scan,
      true,
      (job) =>
        job.deadLetterOrigin !== undefined &&
        (name === '' || job.name === name) &&
        (reason === '' || (job.failedReason ?? '').includes(reason)),
    );
    return {
      state,
      cursor: page.cursor,
      scanned: page.scanned,
      total: page.total,
      jobs: page.matches.map((j) => jobView(j, state, redact)),
    };
  });
  route('GET', 'api/queues/:queue/settings', async ({ params }) => {
    const queue = await queueOf(params);
    const [paused, globalConcurrency, rateLimit, groupDefaults] = await Promise.all([
      queue.isPaused(),
      queue.getGlobalConcurrency(),
      queue.getGlobalRateLimit(),
      queue.getGroupDefaults(),
    ]);
    return { paused, globalConcurrency, rateLimit, groupDefaults };
  });
  route('GET', 'api/queues/:queue/schedulers', async ({ params }) =>
    // The templates' data and options go through the redaction hook, as jobs do.
    (await (await queueOf(params)).getJobSchedulerStates(0, 999, true)).map((s) => redactDeep(s, redact)),
  );
  route('GET', 'api/queues/:queue/schedulers/:id/preview', async ({ url, params }) => {
    const s = await (await queueOf(params)).getJobSchedulerState(params.id);
    if (!s) throw new HttpError(404, `No job scheduler "${params.id}".`);
    const count = intParam(url, 'count', 10, 100);
    const repeat = {
      pattern: s.pattern,
      every: s.every,
      tz: s.tz || undefined,
      startDate: s.startDate,
      endDate: s.endDate,
      offset: s.offset,
    };
    return { id: s.key, next: nextFireTimes(repeat, { from: Date.now(), count }) };
  });
  route('GET', 'api/audit', async ({ url }) => admin.getAuditLog(intParam(url, 'limit', 100, 1000)));
}
