/**
 * The `connection` option, checked before any connection is opened: a `redis://` or `rediss://`
 * URL, a Unix socket path, a `sqlite:` URL (its accepted forms below), ioredis options, or an
 * ioredis client. Anything else (a number, `true`, a mistyped scheme) is refused instead of
 * silently connecting to localhost:6379.
 */
import { InvalidOptionsError } from '../job/errors.js';
import { duration, int, isObject, object, refuse, str, type Spec } from './kit.js';

const ACCEPTED =
  "a redis:// or rediss:// URL, a Unix socket path, a sqlite: URL ('sqlite:<path>', 'sqlite:///<absolute path>' or 'sqlite::memory:'), " +
  'ioredis options ({ host, port, db, ... }) or an ioredis client';

/** What `sqlite:` URLs may look like (docs/backends.md, "Connection strings"). */
export const SQLITE_URL_FORMS = "'sqlite:<path>' (relative or absolute), 'sqlite:///<absolute path>' or 'sqlite::memory:'";

/**
 * The database file (or ':memory:') a `sqlite:` URL names, or a refusal: `sqlite:./x.db`,
 * `sqlite:/var/x.db` and `sqlite:///var/x.db` name files; `sqlite::memory:` a private in-memory
 * database. `sqlite://x.db` (a host part, which would silently mean `/x.db`) and query strings
 * (`?mode=ro`, which would become part of the file name) are refused.
 */
export function sqliteUrlPath(url: string, path = 'connection'): string {
  const rest = url.slice('sqlite:'.length);
  const fail = (why: string): never => {
    throw InvalidOptionsError.of(path, url, `a sqlite: URL: ${SQLITE_URL_FORMS}`, why);
  };
  if (rest === '') return fail('it names no database');
  if (rest === ':memory:') return rest;
  if (rest.includes('?') || rest.includes('#'))
    return fail("query strings and fragments are not supported (they would become part of the file name); remove '?...'");
  if (rest.startsWith('//')) {
    if (rest.startsWith('///')) return rest.slice(2);
    return fail(
      `'sqlite://' would read '${rest.slice(2)}' as a host: use 'sqlite:${rest.slice(2)}' (relative) or 'sqlite:///<absolute path>'`,
    );
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f]/.test(rest)) return fail('it holds a control character');
  return rest;
}

/** Whether `value` is a client (of this or another copy of ioredis): recognised by shape. */
function isClientLike(value: object): boolean {
  const v = value as { duplicate?: unknown; status?: unknown; call?: unknown };
  return typeof v.duplicate === 'function' && typeof v.call === 'function' && typeof v.status === 'string';
}

/** The few ioredis options Hopper's behaviour depends on; the others are ioredis's to check. */
const REDIS_OPTIONS = object(
  {
    host: str(1, 1024),
    port: int(0, 65535),
    path: str(1, 4096),
    db: int(0, 2 ** 31 - 1),
    username: str(0),
    password: str(0),
    socketTimeout: duration(1),
    connectTimeout: duration(1),
    commandTimeout: duration(1),
  },
  { open: true, what: 'ioredis options ({ host, port, db, ... })' },
);

/** The Spec of the `connection` option (for the docs and the fuzzer). */
export const CONNECTION_SPEC: Spec = { accepted: ACCEPTED, check: (value, path) => validateConnection(value, path) };

/** Checks the `connection` option (see the module comment). */
export function validateConnection(value: unknown, path = 'connection'): void {
  if (value === undefined) return;
  if (typeof value === 'string') {
    if (value.startsWith('sqlite:')) {
      sqliteUrlPath(value, path);
      return;
    }
    if (/^sqlite:/i.test(value))
      throw refuse(path, value, ACCEPTED, `the scheme is 'sqlite:' in lower case, as in '${value.replace(/^sqlite:/i, 'sqlite:')}'`);
    if (/^rediss?:\/\//.test(value) || value.startsWith('/')) return;
    if (/^rediss?:\/\//i.test(value)) throw refuse(path, value, ACCEPTED, "the scheme is 'redis://' or 'rediss://' in lower case");
    throw refuse(path, value, ACCEPTED);
  }
  if (!isObject(value)) throw refuse(path, value, ACCEPTED);
  if (isClientLike(value)) return;
  REDIS_OPTIONS.check(value, path);
}
