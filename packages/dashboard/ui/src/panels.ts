/**
 * A queue's other views: its job schedulers (with a preview of their next fire times), groups,
 * dead letters, settings; and the audit log.
 */
import { get, q } from './api.js';
import { duration, h, jsonBlock, replace, route, t, toast, when } from './dom.js';
import type { AuditEntry, GroupInfo, JobView, ScanPage, SchedulerState } from './types.js';
import { act, button, queueTabs } from './view-parts.js';

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
          () => void act(t`Trigger ${s.id}`, 'Run one occurrence now.', q(queue, 'schedulers', s.id, 'trigger'), {}, rerender),
          { 'data-testid': 'scheduler-trigger' },
        ),
        s.paused
          ? button(
              'Resume',
              () => void act(t`Resume ${s.id}`, 'Resume the scheduler.', q(queue, 'schedulers', s.id, 'resume'), {}, rerender),
            )
          : button('Pause', () => void act(t`Pause ${s.id}`, 'Pause the scheduler.', q(queue, 'schedulers', s.id, 'pause'), {}, rerender)),
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
              ? button('Resume', () => void act(t`Resume group ${g.id}`, queue, q(queue, 'groups', g.id, 'resume'), {}, rerender))
              : button('Pause', () => void act(t`Pause group ${g.id}`, queue, q(queue, 'groups', g.id, 'pause'), {}, rerender)),
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
          h('td', {}, ...(job.deadLetterOrigin ? t`${job.deadLetterOrigin.queue}/${job.deadLetterOrigin.jobId}` : [])),
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
    void act('Save settings', t`${queue}: ${JSON.stringify(body)}`, q(queue, 'settings'), body, rerender);
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
