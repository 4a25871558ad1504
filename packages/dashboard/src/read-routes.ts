/**
 * The dashboard's read routes (GET, viewer role): queues, jobs and one job in full, search, the
 * per-minute series and latency, groups, dead letters, settings, schedulers (and a preview of
 * their next fire times) and the audit log.
 */
import { JOB_STATES, nextFireTimes, type Job, type JobState } from 'hopper-queue';
import { HttpError } from './security.js';
import { boundedJob, intParam, jobList, redactedJob, stateParam, type AddRoute, type RouteContext } from './http.js';
import {
  MAX_SCAN,
  SEARCH_FIELDS,
  latency,
  matcher,
  perMinuteSeries,
  scanJobs,
  storedLogs,
  storedOutput,
  type SearchField,
} from './views.js';

/** Registers the read routes. */
export function readRoutes(route: AddRoute, { admin, redactor, overview, queueOf, jobOf }: RouteContext): void {
  route('GET', 'api/queues', async () => overview());
  route('GET', 'api/queues/:queue/jobs', async ({ url, params, budget }) => {
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
    return {
      state,
      offset,
      limit,
      order,
      total,
      jobs: jobList(
        jobs.map((job) => ({ job, state })),
        redactor,
        budget,
      ),
    };
  });
  route('GET', 'api/queues/:queue/jobs/:id', async ({ params, budget }) => {
    const queue = await queueOf(params);
    const job = await jobOf(queue, params.id);
    const [state, steps, pending, processed] = await Promise.all([
      job.getState(),
      job.getSteps(),
      queue.getDependencies(params.id, 'pending', 0, 49),
      queue.getDependencies(params.id, 'processed', 0, 49),
    ]);
    const view = boundedJob(redactedJob(job, state, redactor), budget);
    const children = budget.fit({
      pending: pending.items.map((i) => i.id),
      pendingTotal: pending.total,
      processed: processed.items.map((i) => i.id),
      processedTotal: processed.total,
    });
    const shownSteps = budget.fit(
      steps.map((s) => ({ ...s, result: redactor.value(s.result), error: redactor.maybeText(s.error, 'step') })),
    );
    // Logs and output share what is left: logs stop at half of it, output takes the rest.
    const logs = await storedLogs(queue, params.id, (line) => redactor.text(line, 'log'), budget, budget.left / 2);
    const output = await storedOutput(
      queue,
      params.id,
      (data) => (typeof data === 'string' ? redactor.text(data, 'output') : redactor.value(data)),
      budget,
    );
    return { ...view, logs: logs.logs, logCount: logs.count, steps: shownSteps, output, children, cut: budget.cuts };
  });
  route('GET', 'api/queues/:queue/search', async ({ url, params, budget }) => {
    const queue = await queueOf(params);
    const q = url.searchParams.get('q') ?? '';
    if (q === '' || q.length > 200) throw new HttpError(400, 'q must be the text to search for (1 to 200 characters).');
    const field = (url.searchParams.get('field') ?? 'any') as SearchField;
    if (!SEARCH_FIELDS.includes(field)) throw new HttpError(400, `field must be one of ${SEARCH_FIELDS.join(', ')}.`);
    const state = stateParam(url);
    const cursor = intParam(url, 'cursor', 0, 100_000_000);
    const scan = intParam(url, 'scan', 1000, MAX_SCAN);
    const matches = matcher(field, q);
    // Each job is matched as the viewer sees it (redacted): a search is no oracle for hidden values.
    const pick = (job: Job, jobState: string | undefined) => {
      const view = redactedJob(job, jobState, redactor);
      return matches(view) ? view : undefined;
    };
    // An exact id is found at once, whatever the state and the queue's size.
    const exact = cursor === 0 && (field === 'any' || field === 'id') ? await queue.getJob(q) : undefined;
    const exactView = exact ? pick(exact, await exact.getState()) : undefined;
    const page = await scanJobs(queue, state, cursor, scan, url.searchParams.get('order') === 'asc', (job) => pick(job, state));
    const views = page.matches.filter((v) => v.id !== exact?.id);
    if (exactView) views.unshift(exactView);
    const jobs = views.map((v) => boundedJob(v, budget));
    return { state, field, q, cursor: page.cursor, scanned: page.scanned, total: page.total, jobs };
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
  route('GET', 'api/queues/:queue/dead-letters', async ({ url, params, budget }) => {
    const queue = await queueOf(params);
    const name = url.searchParams.get('name') ?? '';
    const reason = url.searchParams.get('reason') ?? '';
    const state = stateParam(url);
    const cursor = intParam(url, 'cursor', 0, 100_000_000);
    const scan = intParam(url, 'scan', 1000, MAX_SCAN);
    // The reason filter reads the redacted reason, as the search does.
    const page = await scanJobs(queue, state, cursor, scan, true, (job) => {
      if (job.deadLetterOrigin === undefined || (name !== '' && job.name !== name)) return undefined;
      const view = redactedJob(job, state, redactor);
      return reason === '' || (typeof view.failedReason === 'string' && view.failedReason.includes(reason)) ? view : undefined;
    });
    return {
      state,
      cursor: page.cursor,
      scanned: page.scanned,
      total: page.total,
      jobs: page.matches.map((v) => boundedJob(v, budget)),
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
  route('GET', 'api/queues/:queue/schedulers', async ({ params, budget }) =>
    // The templates' data and options go through the redaction, as jobs do.
    (await (await queueOf(params)).getJobSchedulerStates(0, 999, true)).map((s) => budget.fit(redactor.value(s))),
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
  route('GET', 'api/audit', async ({ url, budget }) =>
    // Entries were redacted when recorded; the current rule applies again (it may be stricter now).
    (await admin.getAuditLog(intParam(url, 'limit', 100, 1000))).map((entry) =>
      budget.fit({ ...entry, detail: redactor.maybeText(entry.detail, 'audit') }),
    ),
  );
}
