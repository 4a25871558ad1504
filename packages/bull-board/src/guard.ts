/**
 * `bullBoardGuard()`: a Connect/Express middleware to mount in front of Bull Board's router. Bull
 * Board sets no security headers and takes changes from any origin (a cross-site `text/plain` POST
 * to `add` succeeds behind a cookie login); the guard adds Hopper's dashboard defences that fit
 * Bull Board's UI: a Content-Security-Policy (its page needs inline styles and Google Fonts),
 * `X-Frame-Options: DENY`, `nosniff`, `no-referrer`, and, for every change (any method but GET,
 * HEAD and OPTIONS), a same-origin check on `Origin` (`null` refused) and `Sec-Fetch-Site`, and a
 * JSON body only (a cross-site form cannot send one without a CORS preflight).
 *
 * @example
 * app.use('/admin/queues', yourLogin, bullBoardGuard(), serverAdapter.getRouter());
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Options of {@link bullBoardGuard}. */
export interface BullBoardGuardOptions {
  /** Origins (`https://ops.example.com`) whose changes are accepted besides the request's own. */
  allowedOrigins?: string[];
  /**
   * Behind this many reverse proxies (true: one), believe `X-Forwarded-Proto` and
   * `X-Forwarded-Host` for the request's own origin (an HTTPS-terminating proxy). Default false.
   */
  trustProxy?: boolean | number;
  /** The Content-Security-Policy to send (default {@link BULL_BOARD_CSP}); `false` sends none. */
  contentSecurityPolicy?: string | false;
}

/** A CSP under which Bull Board 9's UI works: its own scripts only, inline styles and Google Fonts, no framing. */
export const BULL_BOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline' https://fonts.googleapis.com; " +
  "font-src 'self' https://fonts.gstatic.com; img-src 'self' data:; connect-src 'self'; object-src 'none'; " +
  "base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

function refuse(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { key: 'ERRORS.FORBIDDEN' }, message });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The value a trusted proxy wrote (the entry `hops` from the end of a comma-separated list). */
function forwarded(value: string | string[] | undefined, hops: number): string | undefined {
  if (hops === 0 || value === undefined) return undefined;
  const parts = (Array.isArray(value) ? value.join(',') : value).split(',').map((s) => s.trim());
  return parts[Math.max(0, parts.length - hops)] || undefined;
}

/** The guard middleware (see the module's comment). */
export function bullBoardGuard(
  options: BullBoardGuardOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  const hops = options.trustProxy === true ? 1 : options.trustProxy === false || options.trustProxy === undefined ? 0 : options.trustProxy;
  if (!Number.isInteger(hops) || hops < 0) throw new TypeError('bullBoardGuard: trustProxy must be true, false or a number of proxies.');
  const allowed = (options.allowedOrigins ?? []).map((o) => {
    const url = new URL(o);
    return url.origin;
  });
  const csp = options.contentSecurityPolicy === undefined ? BULL_BOARD_CSP : options.contentSecurityPolicy;
  return (req, res, next) => {
    if (csp) res.setHeader('content-security-policy', csp);
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    if (SAFE.has(req.method ?? 'GET')) return next();
    const fetchSite = req.headers['sec-fetch-site'];
    if (fetchSite === 'cross-site' || fetchSite === 'same-site')
      return refuse(res, 403, 'Refused: a change from another site (Sec-Fetch-Site).');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
      const proto = forwarded(req.headers['x-forwarded-proto'], hops) ?? (encrypted ? 'https' : 'http');
      const host = forwarded(req.headers['x-forwarded-host'], hops) ?? req.headers.host ?? '';
      let own = '';
      try {
        own = new URL(`${proto}://${host}`).origin;
      } catch {
        return refuse(res, 400, 'Bad request: the Host is not valid.');
      }
      const o = origin.toLowerCase();
      if (o !== own && !allowed.includes(o)) return refuse(res, 403, 'Refused: the request comes from another origin.');
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const length = Number(req.headers['content-length'] ?? 0);
    const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && type !== 'application/json') return refuse(res, 415, 'Refused: a change must send a JSON body (application/json).');
    next();
  };
}
