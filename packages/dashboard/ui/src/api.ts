/**
 * The UI's client of the dashboard API: relative URLs (`api/...`, so any base path works), the
 * stored credentials on every call, the CSRF header on every change, and the live stream read
 * with fetch (EventSource cannot send an Authorization header).
 */
const KEY = 'hopper.dashboard.auth';

/** The Authorization header value kept for this tab (sessionStorage: gone when the tab closes). */
export function credentials(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Stores a token (`Bearer`) or a user and password (`Basic`). */
export function signIn(kind: 'token' | 'basic', a: string, b = ''): void {
  const value = kind === 'token' ? `Bearer ${a.trim()}` : `Basic ${btoa(unescape(encodeURIComponent(`${a}:${b}`)))}`;
  sessionStorage.setItem(KEY, value);
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}

/** An API error: its HTTP status and the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Says a call comes from this UI: the server then answers a 401 with a challenge the browser does not prompt for (the page asks). */
const UI = { 'x-hopper-ui': '1' };

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const auth = credentials();
  return { ...UI, ...(auth ? { authorization: auth } : {}), ...extra };
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`api/${path}`, {
    method,
    credentials: 'same-origin',
    headers: headers(method === 'POST' ? { 'x-hopper-csrf': '1', 'content-type': 'application/json' } : {}),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { error: text };
  }
  if (!res.ok) {
    const message = (parsed as { error?: string } | null)?.error ?? `HTTP ${res.status}`;
    const wait = res.headers.get('retry-after');
    throw new ApiError(res.status, res.status === 429 && wait ? `${message} (try again in ${wait} s)` : message);
  }
  return parsed as T;
}

/** GET `api/<path>` with query parameters. */
export function get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return call<T>('GET', qs ? `${path}?${qs}` : path);
}

/** POST `api/<path>` (a change: CSRF header included). */
export function post<T>(path: string, body: unknown = {}): Promise<T> {
  return call<T>('POST', path, body);
}

/** `queues/<name>/...` with the name encoded. */
export function q(queue: string, ...rest: string[]): string {
  return ['queues', queue, ...rest].map(encodeURIComponent).join('/');
}

/**
 * Reads the live stream (Server-Sent Events over fetch) and calls `onEvent` per event; reconnects
 * after a pause when the stream ends (longer when the server says so: 429 with Retry-After).
 * `onSignedOut` is called, and reading stops, when the server refuses the credentials (401) or
 * ends the stream because the session ended. Returns a function that stops it.
 */
export function live(
  onEvent: (event: string, data: unknown) => void,
  onState: (up: boolean) => void,
  onSignedOut: () => void = () => undefined,
): () => void {
  let stopped = false;
  let controller = new AbortController();
  const run = async (): Promise<void> => {
    while (!stopped) {
      controller = new AbortController();
      let pause = 3000;
      try {
        const res = await fetch('api/stream', { headers: headers(), signal: controller.signal, credentials: 'same-origin' });
        if (res.status === 401) {
          stopped = true;
          onState(false);
          return onSignedOut();
        }
        if (res.status === 429) pause = Math.min(60, Math.max(3, Number(res.headers.get('retry-after')) || 5)) * 1000;
        if (!res.ok || !res.body) throw new Error(`stream: HTTP ${res.status}`);
        onState(true);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
            }
            if (event === 'end') {
              stopped = true;
              onState(false);
              return onSignedOut();
            }
            if (data.length > 0) {
              try {
                onEvent(event, JSON.parse(data.join('\n')));
              } catch {
                // a malformed event is skipped
              }
            }
          }
        }
      } catch {
        // reconnect below
      }
      onState(false);
      if (!stopped) await new Promise((r) => setTimeout(r, pause));
    }
  };
  void run();
  return () => {
    stopped = true;
    controller.abort();
  };
}
