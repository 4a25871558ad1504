/**
 * DOM helpers. Every piece of job content goes into the page as text (`textContent`, text
 * nodes, attribute values set with `setAttribute` on known-safe attributes): no HTML string is
 * ever parsed, so names, data, errors and logs cannot inject markup or script.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/** Attributes that could run or load something: never set from here. */
const FORBIDDEN = /^(on|srcdoc$|style$)/i;

/** Creates `<tag>` with attributes (`onclick`-style keys attach listeners) and text/node children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      el.addEventListener(key.replace(/^on/, '').toLowerCase(), value);
      continue;
    }
    if (FORBIDDEN.test(key)) throw new Error(`h(): attribute "${key}" is not allowed`);
    if (key === 'href') {
      // Only the UI's own hash routes and relative API paths: never a javascript: or external URL.
      const href = String(value);
      if (!href.startsWith('#') && !href.startsWith('api/')) throw new Error(`h(): href "${href}" is not allowed`);
    }
    el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends text (as a text node) or nodes. */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces the children of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A `#/...` link built from path segments (each encoded). */
export function route(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** Formatted JSON as text (a `<pre>`). */
export function jsonBlock(value: unknown, testid?: string): HTMLPreElement {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return h('pre', { class: 'json', 'data-testid': testid }, text);
}

/** A time as local date and time, or a dash. */
export function when(ms: number | null | undefined): string {
  return ms === null || ms === undefined || ms === 0 ? '—' : new Date(ms).toLocaleString();
}

/** A duration (ms) in the largest sensible unit. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  if (ms < 86_400_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

/** A short message at the bottom of the page. */
export function toast(message: string, kind: 'ok' | 'error' = 'ok'): void {
  const el = document.getElementById('toast');
  if (!el) return;
  const item = h('div', { class: `toast ${kind}`, 'data-testid': 'toast' }, message);
  el.appendChild(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}

/**
 * Asks for confirmation in the page (a modal built from text nodes, not `window.confirm`):
 * resolves true on Confirm, false on Cancel or Escape.
 */
export function confirmAction(title: string, detail: string): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      overlay.remove();
      document.removeEventListener('keydown', onKey);
      resolve(ok);
    };
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape') done(false);
    };
    const ok = h('button', { type: 'button', class: 'danger', 'data-testid': 'confirm-ok', onclick: () => done(true) }, 'Confirm');
    const overlay = h(
      'div',
      { class: 'overlay', role: 'dialog', 'aria-modal': 'true', 'data-testid': 'confirm' },
      h(
        'div',
        { class: 'modal' },
        h('h2', {}, title),
        h('p', {}, detail),
        h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => done(false) }, 'Cancel'), ok),
      ),
    );
    document.addEventListener('keydown', onKey);
    document.body.appendChild(overlay);
    ok.focus();
  });
}
