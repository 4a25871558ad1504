/**
 * The UI's views, each rendering into `main` from API data, every job field as text: the overview
 * and a queue's jobs (with search) here; one job (job-view.ts); schedulers, groups, dead letters,
 * settings and the audit log (panels.ts).
 */
import { get, q } from './api.js';
import { throughputChart } from './chart.js';
import { duration, h, replace, route, t, toast } from './dom.js';
import type { JobPage, JobView, QueueOverview, ScanPage, Series } from './types.js';
import { STATES, act, bulkBar, button, jobTable, queueTabs, state } from './view-parts.js';

export { state } from './view-parts.js';
export { jobView } from './job-view.js';
export { auditView, deadLettersView, groupsView, schedulersView, settingsView } from './panels.js';

/** Why a queue needs attention (empty when it does not). */
export function trouble(o: QueueOverview, series?: Series): string[] {
  const out: string[] = [];
  const pending = (o.counts.waiting ?? 0) + (o.counts.prioritized ?? 0);
  if (o.paused && pending > 0) out.push('paused with jobs waiting');
  if (o.workers === 0 && pending > 0) out.push('jobs waiting, no worker');
  if (o.oldestWaitingMs !== null && o.oldestWaitingMs > 5 * 60_000) out.push(`oldest waiting ${duration(o.oldestWaitingMs)}`);
  if (series) {
    const failed = series.failed.slice(0, 5).reduce((a, b) => a + b, 0);
    const completed = series.completed.slice(0, 5).reduce((a, b) => a + b, 0);
    if (failed > 0 && failed >= completed) out.push(`${failed} failed in the last 5 min`);
  }
  return out;
}

// ---------------------------------------------------------------- overview

export async function overviewView(main: HTMLElement, refreshOnly = false): Promise<void> {
  const queues = state.overview ?? (state.overview = await get<QueueOverview[]>('queues'));
  if (Date.now() - state.seriesAt > 15_000 || !refreshOnly) {
    state.seriesAt = Date.now();
    await Promise.all(
      queues.slice(0, 50).map(async (o) => {
        try {
          state.series.set(o.name, await get<Series>(q(o.name, 'series'), { minutes: 60 }));
        } catch {
          // a queue removed meanwhile
        }
      }),
    );
  }
  const cards = queues.map((o) => {
    const series = state.series.get(o.name);
    const problems = trouble(o, series);
    const chart = h('div', { class: 'chart', 'data-testid': 'chart' });
    const card = h(
      'section',
      { class: `queue-card${problems.length ? ' trouble' : ''}`, 'data-testid': 'queue-card', 'data-queue': o.name },
      h(
        'h2',
        {},
        h('a', { href: route('q', o.name), 'data-testid': 'queue-link' }, o.name),
        o.paused ? h('span', { class: 'badge' }, 'paused') : null,
      ),
      problems.length ? h('p', { class: 'problems', 'data-testid': 'trouble' }, `Needs attention: ${problems.join('; ')}`) : null,
      h(
        'div',
        { class: 'counts' },
        ...STATES.map((s) =>
          h('a', { class: `count ${s}`, href: `${route('q', o.name)}?state=${s}` }, h('b', {}, o.counts[s] ?? 0), h('span', {}, s)),
        ),
      ),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'workers'),
        h('dd', {}, o.workers),
        h('dt', {}, 'oldest waiting'),
        h('dd', {}, duration(o.oldestWaitingMs)),
        h('dt', {}, 'schedulers'),
        h('dd', {}, o.schedulers),
        h('dt', {}, 'wait p50/p95'),
        h('dd', {}, series ? `${duration(series.latency.waitP50)} / ${duration(series.latency.waitP95)}` : '—'),
        h('dt', {}, 'run p50/p95'),
        h('dd', {}, series ? `${duration(series.latency.runP50)} / ${duration(series.latency.runP95)}` : '—'),
      ),
      chart,
      h(
        'p',
        { class: 'legend' },
        h('span', { class: 'completed' }, 'completed'),
        ' / ',
        h('span', { class: 'failed' }, 'failed'),
        series ? ` per minute, last hour (${series.source === 'metrics' ? 'worker metrics' : 'from the finished jobs kept'})` : '',
      ),
    );
    if (series) throughputChart(chart, series);
    return card;
  });
  replace(
    main,
    h('h1', {}, 'Queues'),
    queues.length === 0 ? h('p', {}, 'No queue under this prefix yet.') : h('div', { class: 'cards', 'data-testid': 'overview' }, ...cards),
  );
}

// ---------------------------------------------------------------- queue

export async function queueView(main: HTMLElement, queue: string, query: URLSearchParams): Promise<void> {
  const stateName = query.get('state') ?? 'waiting';
  const offset = Number(query.get('offset') ?? 0) || 0;
  const order = query.get('order') === 'asc' ? 'asc' : 'desc';
  const limit = 25;
  const [overview, page] = await Promise.all([
    get<QueueOverview[]>('queues').then((all) => all.find((o) => o.name === queue)),
    get<JobPage>(q(queue, 'jobs'), { state: stateName, offset, limit, order }),
  ]);
  const rerender = (): void => void queueView(main, queue, query);
  const link = (params: Record<string, string | number>): string => {
    const next = new URLSearchParams({ state: stateName, order, offset: String(offset) });
    for (const [k, v] of Object.entries(params)) next.set(k, String(v));
    return `${route('q', queue)}?${next.toString()}`;
  };
  const selected = new Set<string>();
  const searchBox = searchPanel(queue, stateName, selected, rerender);
  const paused = overview?.paused ?? false;
  const cleanState = h(
    'select',
    { 'aria-label': 'state to clean', 'data-testid': 'clean-state' },
    ...['completed', 'failed', 'waiting', 'delayed', 'prioritized'].map((s) => h('option', { value: s }, s)),
  );
  replace(
    main,
    h(
      'h1',
      { 'data-live-queue': queue },
      'Queue ',
      h('span', { 'data-testid': 'queue-name' }, queue),
      paused ? h('span', { class: 'badge', 'data-testid': 'paused-badge' }, 'paused') : null,
    ),
    queueTabs(queue, 'jobs'),
    h(
      'div',
      { class: 'toolbar' },
      paused
        ? button('Resume queue', () => void act('Resume queue', queue, q(queue, 'resume'), {}, rerender), { 'data-testid': 'resume-queue' })
        : button(
            'Pause queue',
            () => void act('Pause queue', t`${queue}: workers take no new job until resumed.`, q(queue, 'pause'), {}, rerender),
            { 'data-testid': 'pause-queue' },
          ),
      ' Clean ',
      cleanState,
      button(
        'Clean',
        () =>
          void act(
            'Clean queue',
            t`Remove up to 1,000 ${cleanState.value} jobs of ${queue}.`,
            q(queue, 'clean'),
            { state: cleanState.value },
            rerender,
          ),
        {
          'data-testid': 'clean',
        },
      ),
    ),
    h(
      'nav',
      { class: 'states' },
      ...STATES.map((s) =>
        h(
          'a',
          {
            href: link({ state: s, offset: 0 }),
            class: s === stateName ? 'state current' : 'state',
            'data-testid': `state-${s}`,
            'data-state': s,
          },
          `${s} (${overview?.counts[s] ?? 0})`,
        ),
      ),
    ),
    searchBox,
    h(
      'div',
      { class: 'pager' },
      `${page.total === 0 ? 0 : offset + 1}–${Math.min(offset + limit, page.total)} of ${page.total} ${stateName} `,
      offset > 0 ? h('a', { href: link({ offset: Math.max(0, offset - limit) }), 'data-testid': 'prev' }, '‹ newer') : null,
      ' ',
      offset + limit < page.total ? h('a', { href: link({ offset: offset + limit }), 'data-testid': 'next' }, 'older ›') : null,
      ' · ',
      h(
        'a',
        { href: link({ order: order === 'asc' ? 'desc' : 'asc', offset: 0 }), 'data-testid': 'order' },
        order === 'asc' ? 'oldest first' : 'newest first',
      ),
    ),
    bulkBar(queue, selected, rerender),
    jobTable(queue, page.jobs, selected),
  );
}

/** Search by id, name, data or failed reason: scans the state slice by slice, showing progress. */
function searchPanel(queue: string, stateName: string, _pageSelection: Set<string>, after: () => void): HTMLElement {
  const input = h('input', {
    type: 'search',
    placeholder: 'id, name, data or failed reason',
    'aria-label': 'search',
    'data-testid': 'search-input',
  });
  const field = h(
    'select',
    { 'aria-label': 'search in', 'data-testid': 'search-field' },
    ...['any', 'id', 'name', 'data', 'reason'].map((f) => h('option', { value: f }, f)),
  );
  const progress = h('progress', { max: 1, value: 0, hidden: true });
  const status = h('span', { 'data-testid': 'search-status' });
  const results = h('div', { 'data-testid': 'search-results' });
  let stop = false;
  const stopButton = button('Stop', () => (stop = true), { hidden: 'hidden' });
  const run = async (): Promise<void> => {
    const text = input.value.trim();
    if (!text) return;
    stop = false;
    stopButton.hidden = false;
    progress.hidden = false;
    const found: JobView[] = [];
    const seen = new Set<string>();
    let cursor: number | null = 0;
    while (cursor !== null && !stop && found.length < 1000) {
      const page: ScanPage = await get<ScanPage>(q(queue, 'search'), { q: text, field: field.value, state: stateName, cursor, scan: 2000 });
      for (const job of page.jobs) {
        if (seen.has(job.id)) continue;
        seen.add(job.id);
        found.push(job);
      }
      cursor = page.cursor;
      progress.max = Math.max(1, page.total);
      progress.value = page.scanned;
      status.textContent = `${found.length} found, ${page.scanned} of ${page.total} ${stateName} jobs searched${cursor === null ? '' : '…'}`;
    }
    stopButton.hidden = true;
    progress.hidden = true;
    if (stop) status.textContent += ' (stopped)';
    const selected = new Set(found.map((j) => j.id));
    replace(
      results,
      h('h3', {}, 'Search results (all selected for bulk actions)'),
      bulkBar(queue, selected, after),
      jobTable(queue, found, selected),
    );
  };
  const form = h(
    'form',
    { class: 'search', role: 'search' },
    input,
    field,
    h('button', { type: 'submit', 'data-testid': 'search-go' }, `Search ${stateName}`),
    stopButton,
    progress,
    status,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void run().catch((error: Error) => toast(error.message, 'error'));
  });
  return h('div', {}, form, results);
}
