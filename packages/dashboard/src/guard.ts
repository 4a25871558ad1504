/**
 * The request-hardening layer every mount goes through before routing: the request target and
 * `Host` checked (a malformed one is a 400, never a crash), the `Host` allow-list (DNS rebinding),
 * the request's own origin and client address as a trusted proxy reports them, and the origins
 * whose changes are accepted (CSRF). Pure functions over strings: the Node listener (node.ts) and
 * the Fetch handler (dashboard.ts) share them, so a request is judged the same way on every mount.
 */
import { isIP } from 'node:net';
import { invalidOption } from './invalid.js';
import { HttpError } from './security.js';

/** How many proxies in front of the dashboard to believe (`X-Forwarded-Proto`, `-Host`, `-For`); 0: none. */
export type TrustProxy = boolean | number;

/** What the hardening layer needs to know, from the dashboard's options. */
export interface GuardOptions {
  /** Host names accepted (lower case; `.example.com` also accepts its subdomains; `*` any); null: any. */
  allowedHosts: readonly string[] | null;
  /** Origins (`https://ops.example.com`) whose changes are accepted besides the request's own. */
  allowedOrigins: readonly string[];
  /** Proxies believed (0: none). */
  trustProxy: number;
}

/** Host names that only ever reach this machine: the default allow-list of the standalone and of `auth: false`. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '.localhost', '127.0.0.1', '[::1]'];

/** The number of proxies believed, from the `trustProxy` option (true is one). */
export function proxyHops(trust: TrustProxy | undefined): number {
  if (trust === undefined || trust === false) return 0;
  if (trust === true) return 1;
  if (!Number.isInteger(trust) || trust < 0 || trust > 32)
    throw invalidOption(
      `trustProxy must be true, false or the number of proxies in front of the dashboard (0 to 32), not ${String(trust)}.`,
    );
  return trust;
}

const NAME = /^[a-z0-9](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_-]{1,63})*\.?$/;

/**
 * A `Host` header value (`name`, `name:port`, `1.2.3.4:80`, `[::1]:3000`) split into its host name
 * (lower case, brackets kept for IPv6) and port; null when it is not a valid host.
 */
export function parseHost(value: string): { hostname: string; port: string } | null {
  if (value.length === 0 || value.length > 300) return null;
  const v = value.toLowerCase();
  let hostname: string;
  let rest: string;
  if (v.startsWith('[')) {
    const close = v.indexOf(']');
    if (close < 0) return null;
    hostname = v.slice(0, close + 1);
    if (isIP(hostname.slice(1, -1)) !== 6) return null;
    rest = v.slice(close + 1);
  } else {
    const colon = v.indexOf(':');
    hostname = colon < 0 ? v : v.slice(0, colon);
    rest = colon < 0 ? '' : v.slice(colon);
    if (!NAME.test(hostname) || hostname.length > 253) return null;
    // Digits and dots only: a dotted IPv4 address, nothing else (`999.1.1.1`, `1.2.3`).
    if (/^[\d.]+$/.test(hostname) && isIP(hostname) !== 4) return null;
  }
  if (rest === '') return { hostname, port: '' };
  const m = /^:(\d{1,5})$/.exec(rest);
  if (!m || Number(m[1]) > 65535) return null;
  return { hostname, port: m[1] };
}

/** Whether `hostname` (from parseHost) is on the allow-list. */
export function hostAllowed(hostname: string, allowed: readonly string[] | null): boolean {
  if (allowed === null) return true;
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  for (const entry of allowed) {
    if (entry === '*' || entry === name) return true;
    if (entry.startsWith('.') && (name.endsWith(entry) || name === entry.slice(1))) return true;
  }
  // Every 127.x.y.z address is loopback too.
  return allowed.includes('127.0.0.1') && isIP(name) === 4 && name.startsWith('127.');
}

/** Checks and normalises an allow-list given in options (throws InvalidOptionsError naming the bad entry). */
export function checkAllowedHosts(hosts: readonly string[], what = 'allowedHosts'): string[] {
  if (!Array.isArray(hosts)) throw invalidOption(`${what} must be an array of host names (e.g. ["ops.example.com"]).`);
  return hosts.map((h) => {
    const entry = String(h).trim().toLowerCase();
    if (entry === '*') return entry;
    const parsed = parseHost(entry.startsWith('.') ? entry.slice(1) : entry);
    if (!parsed || parsed.port !== '')
      throw invalidOption(
        `${what}: "${String(h)}" is not a host name (no scheme, no port; ".example.com" accepts its subdomains; "*" any).`,
      );
    return entry.startsWith('.') ? `.${parsed.hostname}` : parsed.hostname;
  });
}

/** Checks and normalises the allowed origins (`scheme://host[:port]`, as a browser sends them). */
export function checkAllowedOrigins(origins: readonly string[]): string[] {
  if (!Array.isArray(origins)) throw invalidOption('allowedOrigins must be an array of origins (e.g. ["https://ops.example.com"]).');
  return origins.map((o) => {
    let url: URL | undefined;
    try {
      url = new URL(String(o));
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== String(o).replace(/\/$/, '').toLowerCase())
      throw invalidOption(
        `allowedOrigins: "${String(o)}" is not an origin: write it as a browser sends it, e.g. "https://ops.example.com".`,
      );
    return url.origin;
  });
}

/** One entry of a comma-separated forwarded header: the one written by the outermost trusted proxy. */
function forwarded(value: string | null, hops: number): string | undefined {
  if (value === null || hops === 0) return undefined;
  const parts = value.split(',').map((s) => s.trim());
  const v = parts[Math.max(0, parts.length - hops)];
  return v === '' ? undefined : v;
}

/** A request as the hardening layer judged it. */
export interface CheckedRequest {
  /** The origin the browser sees (`https://ops.example.com`), believing the trusted proxies. */
  origin: string;
  /** The client's address: the socket's, or the one the trusted proxies report; '' when unknown. */
  clientAddress: string;
}

/**
 * Judges a request before routing: its `Host` (syntax, then the allow-list) and, behind trusted
 * proxies, the forwarded protocol, host and client. Throws HttpError 400 for a malformed host and
 * for one not on the allow-list alike.
 */
export function checkRequest(url: URL, headers: Headers, socketAddress: string, options: GuardOptions): CheckedRequest {
  const hops = options.trustProxy;
  const fwdHost = forwarded(headers.get('x-forwarded-host'), hops);
  const fwdProto = forwarded(headers.get('x-forwarded-proto'), hops)?.toLowerCase();
  const hostValue = fwdHost ?? url.host;
  const host = parseHost(hostValue);
  if (!host) throw new HttpError(400, 'Bad request: the Host is not a valid host name.');
  if (!hostAllowed(host.hostname, options.allowedHosts))
    throw new HttpError(
      400,
      `Bad request: the host "${host.hostname}" is not allowed here (the dashboard's allowedHosts; with the standalone server, --allowed-host).`,
    );
  if (fwdProto !== undefined && fwdProto !== 'http' && fwdProto !== 'https')
    throw new HttpError(400, 'Bad request: X-Forwarded-Proto must be http or https.');
  const scheme = fwdProto ?? url.protocol.slice(0, -1);
  const defaultPort = scheme === 'https' ? '443' : '80';
  const origin = `${scheme}://${host.hostname}${host.port && host.port !== defaultPort ? `:${host.port}` : ''}`;
  const fwdFor = forwarded(headers.get('x-forwarded-for'), hops);
  const clientAddress = fwdFor !== undefined && isIP(fwdFor.replace(/^\[|\]$/g, '')) ? fwdFor : socketAddress;
  return { origin, clientAddress };
}

/**
 * The CSRF defence's origin rule: a change is accepted without an Origin (not a browser: the
 * custom header still applies) or from the request's own origin or an allowed one; `Origin: null`
 * (sandboxed frames, some redirects) is refused.
 */
export function checkOrigin(origin: string | null, own: string, allowed: readonly string[]): void {
  if (origin === null) return;
  const o = origin.toLowerCase();
  if (o === own || allowed.includes(o)) return;
  throw new HttpError(
    403,
    `Refused: the request comes from another origin (${origin.slice(0, 200)}); behind an HTTPS proxy set trustProxy, or list the origin in allowedOrigins.`,
  );
}
