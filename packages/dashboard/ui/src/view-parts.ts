/**
 * What the UI's views share: the latest overview, confirmed actions, buttons, the queue's tabs,
 * the job table with its selection, and the bulk action bar.
 */
import { post, q } from './api.js';
import { confirmAction, h, route, t, toast, when, type Text } from './dom.js';
import type { JobView, QueueOverview, Series } from './types.js';

export const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];

/** The latest overview (from the live stream or a fetch). */
export const state: { overview: QueueOverview[] | null; series: Map<string, Series>; seriesAt: number } = {
  overview: null,
  series: new Map(),
  seriesAt: 0,
};

/** Runs a change after confirmation; toasts the outcome; calls `after` on success. */
export async function act(title: Text, detail: Text, path: string, body: unknown, after?: (result: unknown) => void): Promise<void> {
  if (!(await confirmAction(title, detail))) return;
  const head = typeof title === 'string' ? [title] : title;
  try {
    const result = await post<unknown>(path, body);
    toast([...head, ': done']);
    after?.(result);
  } catch (error) {
    toast([...head, ': ', (error as Error).message], 'error');
  }
}

export function button(label: string, onclick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  return h('button', { type: 'button', onclick, ...attrs }, label);
}

export function queueTabs(queue: string, current: string): HTMLElement {
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
export function jobTable(queue: string, jobs: JobView[], selected: Set<string>): HTMLTableElement {
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
export function bulkBar(queue: string, selected: Set<string>, after: () => void): HTMLElement {
  const run = (action: string): void => {
    const ids = [...selected].slice(0, 1000);
    if (ids.length === 0) return toast('Select jobs first.', 'error');
    void act(
      `${action} ${ids.length} job(s)`,
      [...t`${action} in ${queue}: `, ...ids.slice(0, 10).flatMap((id, i) => (i === 0 ? [id] : [', ', id])), ids.length > 10 ? ', …' : ''],
      q(queue, 'bulk'),
      { action, ids },
      (r) => {
        const result = r as { done: number; failed: { id: string; error: string }[] };
        if (result.failed.length) toast(t`${result.failed.length} refused: ${result.failed[0].error}`, 'error');
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
