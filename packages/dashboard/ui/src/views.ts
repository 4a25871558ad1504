/**
 * The UI's views, each rendering into `main` from API data, every job field as text.
 */
import { get, post, q } from './api.js';
import { throughputChart } from './chart.js';
import { confirmAction, duration, h, jsonBlock, replace, route, toast, when, type Child } from './dom.js';
import type { AuditEntry, GroupInfo, JobDetail, JobPage, JobView, QueueOverview, ScanPage, SchedulerState, Series } from './types.js';

const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];

/** The latest overview (from the live stream or a fetch). */
export const state: { overview: QueueOverview[] | null; series: Map<string, Series>; seriesAt: number } = {
  overview: null,
  series: new Map(),
  seriesAt: 0,
};

/** Runs a change after confirmation; toasts the outcome; calls `after` on success. */
async function act(title: string, detail: string, path: string, body: unknown, after?: (result: unknown) => void): Promise<void> {
  if (!(await confirmAction(title, detail))) return;
  try {
    const result = await post<unknown>(path, body);
    toast(`${title}: done`);
    after?.(result);
  } catch (error) {
    toast(`${title}: ${(error as Error).message}`, 'error');
  }
}

function button(label: string, onclick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  return h('button', { type: 'button', onclick, ...attrs }, label);
}

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

function queueTabs(queue: string, current: string): HTMLElement {
  const tab = (label: string, href: string, key: string): HTMLElement =>
    h('a', { href, class: key === current ? 'tab current' : 'tab', 'data-testid': `tab-${key}` }, label);
  return h(
    'nav',
    { class: 'tabs' },
    tab('Jobs', route('q', queue), 'jobs'),
    tab('Schedulers', route('q', queue, 'schedulers'), 'schedulers'),
    tab('Groups', route('q', queue, 'groups'), 'groups'),
    tab('Dead letters', route('q', queue, 'dead-letters'), 'dead-letters'),
    tab('Settings', route('q', queue, 'settings'), 'settings'),
  );
}

/** A table of jobs with a checkbox per row; `selected` holds the checked ids. */
function jobTable(queue: string, jobs: JobView[], selected: Set<string>): HTMLTableElement {
  const all = h('input', { type: 'checkbox', 'aria-label': 'select all', 'data-testid': 'select-all' });
  const boxes: HTMLInputElement[] = [];
  all.addEventListener('change', () => {
    for (const box of boxes) {
      box.checked = all.checked;
      if (all.checked) selected.add(box.value);
      else selected.delete(box.value);
    }
  });
  all.checked = jobs.length > 0 && jobs.every((job) => selected.has(job.id));
  const rows = jobs.map((job) => {
    const box = h('input', { type: 'checkbox', value: job.id, 'aria-label': `select ${job.id}` });
    box.checked = selected.has(job.id);
    box.addEventListener('change', () => (box.checked ? selected.add(job.id) : selected.delete(job.id)));
    boxes.push(box);
    return h(
      'tr',
      { 'data-testid': 'job-row', 'data-id': job.id },
      h('td', {}, box),
      h('td', {}, h('a', { href: route('q', queue, 'job', job.id), 'data-testid': 'job-link' }, job.id)),
      h('td', { class: 'name' }, job.name),
      h('td', {}, job.state ?? ''),
      h('td', {}, when(job.timestamp)),
      h('td', {}, job.attemptsMade),
      h('td', { class: 'reason' }, (job.failedReason ?? '').slice(0, 160)),
    );
  });
  return h(
    'table',
    { class: 'jobs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, all),
        h('th', {}, 'id'),
        h('th', {}, 'name'),
        h('th', {}, 'state'),
        h('th', {}, 'added'),
        h('th', {}, 'attempts'),
        h('th', {}, 'failed reason'),
      ),
    ),
    h('tbody', {}, ...rows),
  );
}

/** Bulk action buttons over `selected` (or every id `all()` gives). */
function bulkBar(queue: string, selected: Set<string>, after: () => void): HTMLElement {
  const run = (action: string): void => {
    const ids = [...selected].slice(0, 1000);
    if (ids.length === 0) return toast('Select jobs first.', 'error');
    void act(
      `${action} ${ids.length} job(s)`,
      `${action} in ${queue}: ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', …' : ''}`,
      q(queue, 'bulk'),
      { action, ids },
      (r) => {
        const result = r as { done: number; failed: { id: string; error: string }[] };
        if (result.failed.length) toast(`${result.failed.length} refused: ${result.failed[0].error}`, 'error');
        selected.clear();
        after();
      },
    );
  };
  return h(
    'div',
    { class: 'bulk' },
    'Selected: ',
    ...['retry', 'promote', 'remove', 'cancel'].map((a) => button(a, () => run(a), { 'data-testid': `bulk-${a}` })),
  );
}

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
            () => void act('Pause queue', `${queue}: workers take no new job until resumed.`, q(queue, 'pause'), {}, rerender),
            { 'data-testid': 'pause-queue' },
          ),
      ' Clean ',
      cleanState,
      button(
        'Clean',
        () =>
          void act(
            'Clean queue',
            `Remove up to 1,000 ${cleanState.value} jobs of ${queue}.`,
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

// ---------------------------------------------------------------- job

export async function jobView(main: HTMLElement, queue: string, id: string): Promise<void> {
  const job = await get<JobDetail>(q(queue, 'jobs', id));
  const rerender = (): void => void jobView(main, queue, id);
  const section = (title: string, ...content: Child[]): HTMLElement => h('section', { class: 'panel' }, h('h2', {}, title), ...content);
  const actions: [string, string, string][] = [
    ['retry', 'Retry', 'Run the job again.'],
    ['promote', 'Promote', 'Run the delayed job now.'],
    ['cancel', 'Cancel', 'Cancel the job (a running one is signalled).'],
    ['duplicate', 'Duplicate', 'Add a new job with the same name, data and options.'],
    ['remove', 'Remove', 'Delete the job for good.'],
  ];
  replace(
    main,
    h('p', {}, h('a', { href: route('q', queue) }, `‹ ${queue}`)),
    h(
      'h1',
      {},
      'Job ',
      h('span', { 'data-testid': 'job-id' }, job.id),
      ' ',
      h('span', { class: `badge ${job.state ?? ''}`, 'data-testid': 'job-state' }, job.state ?? 'unknown'),
    ),
    h('p', { class: 'job-name' }, 'name: ', h('span', { 'data-testid': 'job-name' }, job.name)),
    h(
      'div',
      { class: 'toolbar' },
      ...actions.map(([op, label, detail]) =>
        button(
          label,
          () =>
            void act(
              `${label} job ${job.id}`,
              detail,
              q(queue, 'jobs', id, op),
              {},
              op === 'remove' ? () => (location.hash = route('q', queue)) : rerender,
            ),
          {
            'data-testid': `job-${op}`,
          },
        ),
      ),
    ),
    section(
      'Timeline',
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'added'),
        h('dd', {}, when(job.timestamp)),
        h('dt', {}, 'started'),
        h('dd', {}, when(job.processedOn)),
        h('dt', {}, 'finished'),
        h('dd', {}, when(job.finishedOn)),
        h('dt', {}, 'attempts made'),
        h('dd', {}, `${job.attemptsMade} of ${typeof job.opts.attempts === 'number' ? job.opts.attempts : 1}`),
        h('dt', {}, 'progress'),
        h('dd', {}, typeof job.progress === 'number' ? `${job.progress}%` : JSON.stringify(job.progress)),
        h('dt', {}, 'delay / priority'),
        h('dd', {}, `${duration(job.delay)} / ${job.priority}`),
      ),
    ),
    job.failedReason || job.stacktrace.length
      ? section(
          'Error',
          h('p', { class: 'error', 'data-testid': 'failed-reason' }, job.failedReason ?? ''),
          ...job.stacktrace.map((s) => h('pre', { class: 'stack' }, s)),
        )
      : null,
    section('Data', jsonBlock(job.data, 'job-data')),
    section('Options', jsonBlock(job.opts)),
    section('Return value', jsonBlock(job.returnvalue, 'job-return')),
    section(
      `Logs (${job.logCount})`,
      job.logs.length ? h('ol', { class: 'logs', 'data-testid': 'logs' }, ...job.logs.map((l) => h('li', {}, l))) : h('p', {}, 'none'),
    ),
    section(
      'Parent and children',
      h('p', {}, 'parent: ', job.parentKey ?? 'none'),
      h('p', {}, `children pending (${job.children.pendingTotal}): `, job.children.pending.join(', ') || 'none'),
      h('p', {}, `children processed (${job.children.processedTotal}): `, job.children.processed.join(', ') || 'none'),
    ),
    job.output && job.output.chunks.length
      ? section(
          `Output (attempt ${job.output.chunks[job.output.chunks.length - 1].attempt}${job.output.truncated ? ', first chunks only' : ''})`,
          // Text chunks as they were written, JSON chunks as JSON: all as text, never as markup.
          h(
            'pre',
            { class: 'output', 'data-testid': 'job-output' },
            job.output.chunks.map((c) => (typeof c.data === 'string' ? c.data : `${JSON.stringify(c.data)}\n`)).join(''),
          ),
        )
      : null,
    job.steps.length
      ? section(
          'Steps',
          h(
            'table',
            {},
            h('tr', {}, h('th', {}, 'step'), h('th', {}, 'at'), h('th', {}, 'duration'), h('th', {}, 'result or error')),
            ...job.steps.map((s) =>
              h(
                'tr',
                {},
                h('td', {}, s.key),
                h('td', {}, when(s.at)),
                h('td', {}, duration(s.durationMs)),
                h('td', {}, s.error ?? JSON.stringify(s.result) ?? ''),
              ),
            ),
          ),
        )
      : null,
    job.deadLetterOrigin ? section('Dead letter of', h('p', {}, `${job.deadLetterOrigin.queue} / ${job.deadLetterOrigin.jobId}`)) : null,
  );
}

// ---------------------------------------------------------------- schedulers

export async function schedulersView(main: HTMLElement, queue: string): Promise<void> {
  const list = await get<SchedulerState[]>(q(queue, 'schedulers'));
  const rerender = (): void => void schedulersView(main, queue);
  const rows = list.map((s) => {
    const preview = h('td', { class: 'preview' });
    const row = h(
      'tr',
      { 'data-testid': 'scheduler-row', 'data-id': s.id },
      h('td', {}, s.id),
      h('td', {}, s.name),
      h('td', {}, s.pattern ?? (s.every ? `every ${duration(s.every)}` : '—')),
      h('td', {}, s.tz || 'UTC'),
      h('td', {}, s.paused ? 'paused' : when(s.next)),
      h('td', {}, `${s.fired} fired, ${s.skippedByOverlap} skipped, ${s.missed} missed`),
      preview,
      h(
        'td',
        {},
        button(
          'Trigger',
          () => void act(`Trigger ${s.id}`, 'Run one occurrence now.', q(queue, 'schedulers', s.id, 'trigger'), {}, rerender),
          { 'data-testid': 'scheduler-trigger' },
        ),
        s.paused
          ? button(
              'Resume',
              () => void act(`Resume ${s.id}`, 'Resume the scheduler.', q(queue, 'schedulers', s.id, 'resume'), {}, rerender),
            )
          : button('Pause', () => void act(`Pause ${s.id}`, 'Pause the scheduler.', q(queue, 'schedulers', s.id, 'pause'), {}, rerender)),
      ),
    );
    void get<{ next: number[] }>(q(queue, 'schedulers', s.id, 'preview'), { count: 3 })
      .then((p) => replace(preview, ...p.next.map((t) => h('div', {}, when(t)))))
      .catch(() => replace(preview, '—'));
    return row;
  });
  replace(
    main,
    h('h1', {}, 'Queue ', queue),
    queueTabs(queue, 'schedulers'),
    list.length === 0
      ? h('p', {}, 'No job scheduler.')
      : h(
          'table',
          { class: 'jobs' },
          h('tr', {}, ...['id', 'job name', 'spec', 'time zone', 'next', 'counters', 'next fire times', ''].map((t) => h('th', {}, t))),
          ...rows,
        ),
  );
}

// ---------------------------------------------------------------- groups

export async function groupsView(main: HTMLElement, queue: string): Promise<void> {
  const page = await get<{ total: number; groups: GroupInfo[] }>(q(queue, 'groups'), { limit: 100 });
  const rerender = (): void => void groupsView(main, queue);
  replace(
    main,
    h('h1', {}, 'Queue ', queue),
    queueTabs(queue, 'groups'),
    h('p', {}, `${page.total} group(s)${page.total > 100 ? ' (the first 100)' : ''}`),
    h(
      'table',
      { class: 'jobs' },
      h('tr', {}, ...['group', 'status', 'waiting', 'prioritized', 'active', 'concurrency', 'rate limit', ''].map((t) => h('th', {}, t))),
      ...page.groups.map((g) =>
        h(
          'tr',
          { 'data-testid': 'group-row' },
          h('td', {}, g.id),
          h('td', {}, g.status),
          h('td', {}, g.waiting),
          h('td', {}, g.prioritized),
          h('td', {}, g.active),
          h('td', {}, g.concurrency ?? 'default'),
          h('td', {}, g.limiter ? `${g.limiter.max} per ${duration(g.limiter.duration)}` : 'default'),
          h(
            'td',
            {},
            g.status === 'paused'
              ? button('Resume', () => void act(`Resume group ${g.id}`, queue, q(queue, 'groups', g.id, 'resume'), {}, rerender))
              : button('Pause', () => void act(`Pause group ${g.id}`, queue, q(queue, 'groups', g.id, 'pause'), {}, rerender)),
          ),
        ),
      ),
    ),
  );
}

// ---------------------------------------------------------------- dead letters

export async function deadLettersView(main: HTMLElement, queue: string, query: URLSearchParams): Promise<void> {
  const name = query.get('name') ?? '';
  const reason = query.get('reason') ?? '';
  const found: JobView[] = [];
  let scanned = 0;
  let total = 0;
  for (const st of ['waiting', 'failed', 'completed']) {
    let cursor: number | null = 0;
    while (cursor !== null && found.length < 1000) {
      const page: ScanPage = await get<ScanPage>(q(queue, 'dead-letters'), { state: st, name, reason, cursor, scan: 5000 });
      found.push(...page.jobs);
      cursor = page.cursor;
      scanned += page.jobs.length === 0 && cursor === null ? page.total : 0;
      total = Math.max(total, page.total);
    }
  }
  const rerender = (): void => void deadLettersView(main, queue, query);
  const nameInput = h('input', { type: 'text', value: name, placeholder: 'job name', 'aria-label': 'job name', 'data-testid': 'dl-name' });
  const reasonInput = h('input', {
    type: 'text',
    value: reason,
    placeholder: 'failed reason contains',
    'aria-label': 'failed reason',
    'data-testid': 'dl-reason',
  });
  const filter = h('form', { class: 'search' }, nameInput, reasonInput, h('button', { type: 'submit' }, 'Filter'));
  filter.addEventListener('submit', (e) => {
    e.preventDefault();
    const next = new URLSearchParams({ name: nameInput.value, reason: reasonInput.value });
    location.hash = `${route('q', queue, 'dead-letters')}?${next.toString()}`;
  });
  const selected = new Set(found.map((j) => j.id));
  void scanned;
  replace(
    main,
    h('h1', {}, 'Queue ', queue),
    queueTabs(queue, 'dead-letters'),
    filter,
    h('p', { 'data-testid': 'dl-count' }, `${found.length} dead letter(s)${found.length >= 1000 ? ' (the first 1,000)' : ''}`),
    found.length
      ? button(
          `Replay ${found.length} dead letter(s)`,
          () =>
            void act(
              `Replay ${selected.size} dead letter(s)`,
              'Put their jobs back into their origin queues.',
              q(queue, 'dead-letters', 'replay'),
              { ids: [...selected] },
              (r) => {
                const result = r as { replayed: number; refused: string[] };
                toast(`${result.replayed} replayed, ${result.refused.length} refused`);
                rerender();
              },
            ),
          { 'data-testid': 'dl-replay' },
        )
      : null,
    h(
      'table',
      { class: 'jobs' },
      h('tr', {}, ...['', 'id', 'name', 'origin', 'failed', 'reason'].map((t) => h('th', {}, t))),
      ...found.map((job) => {
        const box = h('input', { type: 'checkbox', 'aria-label': `select ${job.id}` });
        box.checked = true;
        box.addEventListener('change', () => (box.checked ? selected.add(job.id) : selected.delete(job.id)));
        return h(
          'tr',
          { 'data-testid': 'dl-row' },
          h('td', {}, box),
          h('td', {}, h('a', { href: route('q', queue, 'job', job.id) }, job.id)),
          h('td', {}, job.name),
          h('td', {}, job.deadLetterOrigin ? `${job.deadLetterOrigin.queue}/${job.deadLetterOrigin.jobId}` : ''),
          h('td', {}, when(job.deadLetterOrigin?.failedOn)),
          h('td', { class: 'reason' }, job.failedReason ?? ''),
        );
      }),
    ),
  );
}

// ---------------------------------------------------------------- settings

export async function settingsView(main: HTMLElement, queue: string): Promise<void> {
  const s = await get<{
    paused: boolean;
    globalConcurrency: number | null;
    rateLimit: { max: number; duration: number } | null;
    groupDefaults: unknown;
  }>(q(queue, 'settings'));
  const rerender = (): void => void settingsView(main, queue);
  const conc = h('input', {
    type: 'number',
    min: 1,
    value: s.globalConcurrency ?? '',
    placeholder: 'none',
    'aria-label': 'global concurrency',
    'data-testid': 'set-concurrency',
  });
  const max = h('input', { type: 'number', min: 1, value: s.rateLimit?.max ?? '', placeholder: 'max', 'aria-label': 'rate limit max' });
  const dur = h('input', {
    type: 'number',
    min: 1,
    value: s.rateLimit?.duration ?? '',
    placeholder: 'ms',
    'aria-label': 'rate limit duration',
  });
  const save = (): void => {
    const body = {
      globalConcurrency: conc.value === '' ? null : Number(conc.value),
      rateLimit: max.value === '' || dur.value === '' ? null : { max: Number(max.value), duration: Number(dur.value) },
    };
    void act('Save settings', `${queue}: ${JSON.stringify(body)}`, q(queue, 'settings'), body, rerender);
  };
  replace(
    main,
    h('h1', {}, 'Queue ', queue),
    queueTabs(queue, 'settings'),
    h(
      'section',
      { class: 'panel' },
      h('p', {}, `Paused: ${s.paused ? 'yes' : 'no'}`),
      h('label', {}, 'Global concurrency ', conc),
      h('p', {}, h('label', {}, 'Rate limit ', max, ' jobs per ', dur, ' ms')),
      button('Save', save, { 'data-testid': 'settings-save' }),
      h('h3', {}, 'Group defaults'),
      jsonBlock(s.groupDefaults),
    ),
  );
}

// ---------------------------------------------------------------- audit

export async function auditView(main: HTMLElement): Promise<void> {
  const entries = await get<AuditEntry[]>('audit', { limit: 200 });
  replace(
    main,
    h('h1', {}, 'Audit log'),
    h(
      'table',
      { class: 'jobs', 'data-testid': 'audit' },
      h('tr', {}, ...['when', 'who', 'action', 'target', 'detail'].map((t) => h('th', {}, t))),
      ...entries.map((e) =>
        h(
          'tr',
          { 'data-testid': 'audit-row' },
          h('td', {}, when(e.at)),
          h('td', {}, e.who),
          h('td', {}, e.action),
          h('td', {}, e.target),
          h('td', { class: 'reason' }, e.detail ?? ''),
        ),
      ),
    ),
  );
}
