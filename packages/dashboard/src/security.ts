/**
 * Who may do what: authentication (tokens, basic auth, or the host application's own hook),
 * roles (`viewer` reads, `operator` acts), the CSRF defence of every mutation, and the headers
 * every response carries. Secure by default: a dashboard without an auth setting refuses to start.
 */
import { timingSafeEqual, createHash } from 'node:crypto';

/** `viewer` reads; `operator` reads and acts. */
export type Role = 'viewer' | 'operator';

/** The authenticated caller. */
export interface Principal {
  /** A name for the audit log (a user, or a token's label). */
  user: string;
  role: Role;
}

/** How the dashboard authenticates requests. */
export type AuthOptions =
  /** Bearer tokens (`Authorization: Bearer <token>`). */
  | { tokens: { token: string; role?: Role; name?: string }[] }
  /** HTTP basic auth. */
  | { basic: { user: string; password: string; role?: Role }[] }
  /** The host application's own login: return the principal, or null to refuse (401). */
  | { authorize: (request: Request) => Principal | null | Promise<Principal | null> }
  /** No authentication at all (every caller is an operator): only behind your own gateway. */
  | false;

/** A request refused: status and message for the JSON error reply. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Compares secrets in constant time (hashing first, so lengths do not leak either). */
function same(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Checks an auth setting at start: a mistake fails loudly, never as an open dashboard. */
export function checkAuth(auth: AuthOptions | undefined): AuthOptions {
  if (auth === undefined) {
    throw new TypeError(
      'The dashboard needs an `auth` setting: { tokens: [{ token }] }, { basic: [{ user, password }] }, { authorize(request) } for your own login, or `auth: false` to turn authentication off explicitly.',
    );
  }
  if (auth === false) return auth;
  if ('tokens' in auth) {
    if (
      !Array.isArray(auth.tokens) ||
      auth.tokens.length === 0 ||
      auth.tokens.some((t) => typeof t.token !== 'string' || t.token.length < 16)
    ) {
      throw new TypeError('auth.tokens must list at least one token of 16 characters or more.');
    }
  } else if ('basic' in auth) {
    if (!Array.isArray(auth.basic) || auth.basic.length === 0 || auth.basic.some((u) => !u.user || !u.password)) {
      throw new TypeError('auth.basic must list at least one { user, password }.');
    }
  } else if (typeof (auth as { authorize?: unknown }).authorize !== 'function') {
    throw new TypeError('auth must have tokens, basic or authorize, or be false.');
  }
  return auth;
}

/** The caller of `request`, or an HttpError 401. */
export async function authenticate(auth: AuthOptions, request: Request): Promise<Principal> {
  if (auth === false) return { user: 'anonymous', role: 'operator' };
  const header = request.headers.get('authorization') ?? '';
  if ('tokens' in auth) {
    const m = /^Bearer\s+(.+)$/i.exec(header);
    const found = m ? auth.tokens.find((t) => same(t.token, m[1].trim())) : undefined;
    if (found) return { user: found.name ?? 'token', role: found.role ?? 'operator' };
  } else if ('basic' in auth) {
    const m = /^Basic\s+(.+)$/i.exec(header);
    if (m) {
      const decoded = Buffer.from(m[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
      const found = auth.basic.find((u) => same(u.user, user) && same(u.password, password));
      if (colon > 0 && found) return { user: found.user, role: found.role ?? 'operator' };
    }
  } else {
    const principal = await auth.authorize(request);
    if (principal) return principal;
  }
  throw new HttpError(401, 'Authentication required.');
}

/** The header a mutation must carry: a cross-site form or image cannot set it. */
export const CSRF_HEADER = 'x-hopper-csrf';

/**
 * The CSRF defence of a mutation: the custom header, and an Origin (when the browser sends one)
 * equal to the request's own.
 */
export function checkCsrf(request: Request): void {
  if (request.headers.get(CSRF_HEADER) !== '1') {
    throw new HttpError(403, `Refused: a change needs the header "${CSRF_HEADER}: 1" (CSRF defence).`);
  }
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== new URL(request.url).origin) {
    throw new HttpError(403, `Refused: the request comes from another origin (${origin}).`);
  }
}

/** Headers of every response: no caching, no sniffing, no framing, and a strict CSP. */
export const SECURITY_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
};

/** Field names whose values the default redaction hides. */
const SECRET = /pass(word)?|secret|token|api[-_]?key|authorization|credential|private[-_]?key/i;

/** A redaction hook: given a field name and value (and its path), what to show instead. */
export type Redact = (key: string, value: unknown, path: string[]) => unknown;

/** The default redaction: values under secret-looking names become '[redacted]'. */
export const defaultRedact: Redact = (key, value) => (SECRET.test(key) ? '[redacted]' : value);

/** Applies `redact` to every field of a JSON-like value, at any depth (bounded depth: 20). */
export function redactDeep(value: unknown, redact: Redact, path: string[] = []): unknown {
  if (path.length > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v, i) => redactDeep(v, redact, [...path, String(i)]));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const shown = redact(key, v, [...path, key]);
    out[key] = shown === v ? redactDeep(v, redact, [...path, key]) : shown;
  }
  return out;
}
