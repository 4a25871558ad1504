/**
 * The job view: one job in full (data, options, progress, logs, steps, output, children), with
 * its actions.
 */
import { get, q } from './api.js';
import { duration, h, jsonBlock, replace, route, t, when, type Child } from './dom.js';
import type { JobDetail } from './types.js';
import { act, button } from './view-parts.js';

/** Ids as pieces (each its own isolate), comma-separated; 'none' when empty. */
const list = (ids: string[]): string[] => (ids.length === 0 ? ['none'] : ids.flatMap((id, i) => (i === 0 ? [id] : [', ', id])));

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
    h('p', {}, h('a', { href: route('q', queue) }, '‹ ', queue)),
    h(
      'h1',
      {},
      'Job ',
      h('span', { 'data-testid': 'job-id' }, job.id),
      ' ',
      h('span', { class: `badge ${job.state ?? ''}`, 'data-testid': 'job-state' }, job.state ?? 'unknown'),
    ),
    h('p', { class: 'job-name' }, 'name: ', h('span', { 'data-testid': 'job-name' }, job.name)),
    job.cut > 0
      ? h(
          'p',
          { class: 'notice', 'data-testid': 'job-cut' },
          `Some values are too large to show whole: ${job.cut} were cut (marked "[cut: … bytes]"). Read them in full with the Queue API.`,
        )
      : null,
    h(
      'div',
      { class: 'toolbar' },
      ...actions.map(([op, label, detail]) =>
        button(
          label,
          () =>
            void act(
              t`${label} job ${job.id}`,
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
      job.logs.length < job.logCount ? `Logs (the newest ${job.logs.length} of ${job.logCount})` : `Logs (${job.logCount})`,
      job.logs.length ? h('ol', { class: 'logs', 'data-testid': 'logs' }, ...job.logs.map((l) => h('li', {}, l))) : h('p', {}, 'none'),
    ),
    section(
      'Parent and children',
      h('p', {}, 'parent: ', job.parentKey ?? 'none'),
      h('p', {}, `children pending (${job.children.pendingTotal}): `, ...list(job.children.pending)),
      h('p', {}, `children processed (${job.children.processedTotal}): `, ...list(job.children.processed)),
    ),
    job.output && job.output.chunks.length
      ? section(
          `Output (attempt ${job.output.chunks[job.output.chunks.length - 1].attempt}${job.output.truncated ? ', the first chunks only' : ''})`,
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
    job.deadLetterOrigin
      ? section('Dead letter of', h('p', {}, ...t`${job.deadLetterOrigin.queue} / ${job.deadLetterOrigin.jobId}`))
      : null,
  );
}
