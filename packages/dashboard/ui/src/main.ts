/**
 * The dashboard's web UI: a hash router over the views, the sign-in form (a token or a user and
 * password, kept in sessionStorage), and live updates from the API's event stream.
 */
import './style.css';
import { ApiError, credentials, get, live, signIn, signOut } from './api.js';
import { h, replace, route, toast } from './dom.js';
import type { QueueOverview } from './types.js';
import { auditView, deadLettersView, groupsView, jobView, overviewView, queueView, schedulersView, settingsView, state } from './views.js';

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const liveBadge = document.getElementById('live') as HTMLElement;
const logout = document.getElementById('logout') as HTMLButtonElement;
let stopLive: (() => void) | null = null;
let rendering = 0;

function loginView(message?: string): void {
  stopLive?.();
  stopLive = null;
  const token = h('input', {
    type: 'password',
    autocomplete: 'off',
    'aria-label': 'token',
    'data-testid': 'login-token',
    placeholder: 'token',
  });
  const user = h('input', { type: 'text', autocomplete: 'username', 'aria-label': 'user', placeholder: 'user' });
  const password = h('input', { type: 'password', autocomplete: 'current-password', 'aria-label': 'password', placeholder: 'password' });
  const tokenForm = h(
    'form',
    { class: 'login', 'data-testid': 'login-form' },
    h('h2', {}, 'Token'),
    token,
    h('button', { type: 'submit', 'data-testid': 'login-go' }, 'Sign in'),
  );
  const basicForm = h(
    'form',
    { class: 'login' },
    h('h2', {}, 'User and password'),
    user,
    password,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  tokenForm.addEventListener('submit', (e) => {
    e.preventDefault();
    signIn('token', token.value);
    void start();
  });
  basicForm.addEventListener('submit', (e) => {
    e.preventDefault();
    signIn('basic', user.value, password.value);
    void start();
  });
  replace(
    main,
    h('h1', {}, 'Sign in'),
    message ? h('p', { class: 'error' }, message) : null,
    h(
      'p',
      {},
      'Sign in with a token (the one hopper-dashboard printed at start, or your operator token), or with a user and password ' +
        '(npm run demo prints them). Either is kept in this tab only.',
    ),
    h('div', { class: 'logins' }, tokenForm, basicForm),
  );
}

function setNav(): void {
  replace(
    nav,
    h('a', { href: route(), 'data-testid': 'nav-overview' }, 'Overview'),
    h('a', { href: route('audit'), 'data-testid': 'nav-audit' }, 'Audit log'),
  );
}

/** Renders the view of the current hash. */
async function render(): Promise<void> {
  const id = ++rendering;
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, search = ''] = hash.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  try {
    if (parts.length === 0) await overviewView(main);
    else if (parts[0] === 'audit') await auditView(main);
    else if (parts[0] === 'q' && parts[1] !== undefined) {
      const queue = parts[1];
      if (parts[2] === 'job' && parts[3] !== undefined) await jobView(main, queue, parts[3]);
      else if (parts[2] === 'schedulers') await schedulersView(main, queue);
      else if (parts[2] === 'groups') await groupsView(main, queue);
      else if (parts[2] === 'dead-letters') await deadLettersView(main, queue, query);
      else if (parts[2] === 'settings') await settingsView(main, queue);
      else await queueView(main, queue, query);
    } else replace(main, h('h1', {}, 'Not found'), h('a', { href: route() }, 'Back to the overview'));
    // Tests (and anyone scripting the UI) wait for the view of the current hash to be drawn.
    if (id === rendering) main.setAttribute('data-ready', location.hash);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return loginView(credentials() ? 'Those credentials were refused.' : undefined);
    replace(main, h('h1', {}, 'Error'), h('p', { class: 'error', 'data-testid': 'error' }, (error as Error).message));
  }
}

async function start(): Promise<void> {
  try {
    state.overview = await get<QueueOverview[]>('queues');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return loginView(credentials() ? 'Those credentials were refused.' : undefined);
    toast((error as Error).message, 'error');
  }
  logout.hidden = credentials() === null;
  setNav();
  stopLive?.();
  stopLive = live(
    (event, data) => {
      if (event !== 'overview') return;
      state.overview = data as QueueOverview[];
      // The overview redraws live; other views keep their state (a reload re-reads them).
      if (location.hash.replace(/^#\/?/, '') === '' && !document.querySelector('.overlay')) void overviewView(main, true);
      // A queue's page keeps its list; its per-state counts follow live.
      const heading = main.querySelector('[data-live-queue]');
      const current = heading && state.overview.find((o) => o.name === heading.getAttribute('data-live-queue'));
      if (current) {
        for (const link of main.querySelectorAll('a[data-state]')) {
          const name = link.getAttribute('data-state') ?? '';
          link.textContent = `${name} (${current.counts[name] ?? 0})`;
        }
      }
    },
    (up) => {
      liveBadge.textContent = up ? 'live' : 'offline';
      liveBadge.className = up ? 'live up' : 'live';
    },
    () => loginView('Your session ended: sign in again.'),
  );
  await render();
}

logout.addEventListener('click', () => {
  signOut();
  logout.hidden = true;
  loginView();
});
window.addEventListener('hashchange', () => void render());
void start();
