/**
 * DOM helpers. Every piece of job content goes into the page as text (`textContent`, text
 * nodes, attribute values set with `setAttribute` on known-safe attributes): no HTML string is
 * ever parsed, so names, data, errors and logs cannot inject markup or script. Every string is
 * its own bidirectional isolate (a `<bdi>`), so a name holding a right-to-left override (U+202E)
 * cannot reorder the text around it; `t` keeps each interpolated value its own piece.
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

/** Appends nodes, numbers (as text) and strings, each string in a `<bdi>` of its own (an isolate: see the module's comment). */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false || child === '') continue;
    if (typeof child === 'number') parent.appendChild(document.createTextNode(String(child)));
    else if (typeof child === 'string') {
      const bdi = document.createElement('bdi');
      bdi.textContent = child;
      parent.appendChild(bdi);
    } else parent.appendChild(child);
  }
}

/** Text with values in it, each value a piece of its own (so `append` isolates it): `t\`Retry job ${id}\``. */
export function t(strings: TemplateStringsArray, ...values: (string | number | null | undefined)[]): string[] {
  const out: string[] = [];
  strings.forEach((s, i) => {
    if (s) out.push(s);
    if (i < values.length && values[i] !== null && values[i] !== undefined) out.push(String(values[i]));
  });
  return out;
}

/** Text as pieces (a plain string is one). */
export type Text = string | string[];
const pieces = (text: Text): string[] => (typeof text === 'string' ? [text] : text);

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
export function toast(message: Text, kind: 'ok' | 'error' = 'ok'): void {
  const el = document.getElementById('toast');
  if (!el) return;
  const item = h('div', { class: `toast ${kind}`, 'data-testid': 'toast' }, ...pieces(message));
  el.appendChild(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}

/**
 * Asks for confirmation in the page (a modal built from text nodes, not `window.confirm`):
 * resolves true on Confirm, false on Cancel or Escape.
 */
export function confirmAction(title: Text, detail: Text): Promise<boolean> {
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
        h('h2', {}, ...pieces(title)),
        h('p', {}, ...pieces(detail)),
        h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => done(false) }, 'Cancel'), ok),
      ),
    );
    document.addEventListener('keydown', onKey);
    document.body.appendChild(overlay);
    ok.focus();
  });
}
