/**
 * Who may do what: authentication (tokens, basic auth, or the host application's own hook),
 * roles (`viewer` reads, `operator` acts), the CSRF defence of every mutation, and the headers
 * every response carries. Secure by default: a dashboard without an auth setting refuses to start.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { invalidOption } from './invalid.js';

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

/** A request refused: status, message for the JSON error reply, and headers of the reply (`retry-after`, ...). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
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
    throw invalidOption(
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
      throw invalidOption('auth.tokens must list at least one token of 16 characters or more.');
    }
  } else if ('basic' in auth) {
    if (
      !Array.isArray(auth.basic) ||
      auth.basic.length === 0 ||
      auth.basic.some((u) => typeof u.user !== 'string' || !u.user || u.user.includes(':') || typeof u.password !== 'string' || !u.password)
    ) {
      throw invalidOption('auth.basic must list at least one { user, password } (a user name without ":").');
    }
  } else if (typeof (auth as { authorize?: unknown }).authorize !== 'function') {
    throw invalidOption('auth must have tokens, basic or authorize, or be false.');
  }
  return auth;
}

/** The realm named in the 401 challenges. */
const REALM = 'realm="Hopper dashboard"';

/** An authenticated caller, and the key its requests and streams are counted under. */
export interface Caller {
  principal: Principal;
  /** A stable key per credential (a token, a basic user, an `authorize` user, or the client address with `auth: false`). */
  key: string;
}

/**
 * The caller of `request`, or an HttpError 401 (with the challenge of the auth scheme in use).
 * `onFailure` is called when credentials were presented to the dashboard's own check (a token or a
 * user and password) and were wrong: the sign-in limiter counts those.
 */
export async function authenticate(
  auth: AuthOptions,
  request: Request,
  clientAddress: string,
  onFailure: () => void = () => undefined,
): Promise<Caller> {
  if (auth === false) return { principal: { user: 'anonymous', role: 'operator' }, key: `address:${clientAddress}` };
  const header = request.headers.get('authorization') ?? '';
  // The dashboard's own UI asks for credentials in its page: a challenge the browser does not
  // act on spares it the browser's own sign-in prompt. Any other client gets the standard one.
  const fromUi = request.headers.get(UI_HEADER) === '1';
  let challenge: Record<string, string> = {};
  if ('tokens' in auth) {
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (m) {
      const presented = m[1].trim();
      const index = auth.tokens.findIndex((t) => same(t.token, presented));
      if (index >= 0) {
        const found = auth.tokens[index];
        return { principal: { user: found.name ?? 'token', role: found.role ?? 'operator' }, key: `token:${index}` };
      }
      onFailure();
    }
    challenge = { 'www-authenticate': `Bearer ${REALM}` };
  } else if ('basic' in auth) {
    const m = /^Basic\s+(.+)$/i.exec(header);
    if (m) {
      const decoded = Buffer.from(m[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
      // Every entry is compared (no early exit), so the time taken does not tell which user exists.
      let found: (typeof auth.basic)[number] | undefined;
      for (const u of auth.basic) if (same(u.user, user) && same(u.password, password) && !found) found = u;
      if (colon > 0 && found) return { principal: { user: found.user, role: found.role ?? 'operator' }, key: `basic:${found.user}` };
      onFailure();
    }
    challenge = { 'www-authenticate': `${fromUi ? 'HopperBasic' : 'Basic'} ${REALM}, charset="UTF-8"` };
  } else {
    const principal = await auth.authorize(request);
    if (principal) {
      if (typeof principal.user !== 'string' || (principal.role !== 'viewer' && principal.role !== 'operator'))
        throw new Error('auth.authorize must return { user: string, role: "viewer" | "operator" } or null.');
      return { principal, key: `user:${principal.user}` };
    }
  }
  throw new HttpError(401, 'Authentication required.', challenge);
}

/** The header the dashboard's own UI sends with every call (see `authenticate`'s challenge). */
export const UI_HEADER = 'x-hopper-ui';

/** The header a mutation must carry: a cross-site form or image cannot set it. */
export const CSRF_HEADER = 'x-hopper-csrf';

/**
 * The CSRF defence's first half: the custom header (a cross-site form or image cannot send it,
 * and a cross-site script cannot without a CORS preflight the dashboard never grants). The
 * Origin rule is guard.ts's `checkOrigin`.
 */
export function checkCsrfHeader(request: Request): void {
  if (request.headers.get(CSRF_HEADER) !== '1') {
    throw new HttpError(403, `Refused: a change needs the header "${CSRF_HEADER}: 1" (CSRF defence).`);
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
