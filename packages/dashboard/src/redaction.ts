/**
 * Redaction, as a property of the data path: every value a reply, a search, the live stream or the
 * audit log shows goes through one {@link Redactor}. Structured values (data, options, return
 * values, progress, steps, JSON output) hide the values of secret-looking field names, at any
 * depth (what is nested deeper than {@link MAX_REDACT_DEPTH} is hidden whole, never shown in clear),
 * and passwords inside URL-looking strings. Free text (failed reasons, stack traces, logs, text
 * output) cannot be redacted reliably: a best-effort pass hides URL passwords, `Bearer`/`Basic`
 * credentials and `secret=value` pairs, and `redactText` is the hook for your own rule.
 */

/** A structured-value redaction hook: given a field name, its value and its path, what to show instead (return `value` itself to keep it). */
export type Redact = (key: string, value: unknown, path: string[]) => unknown;

/** Where a piece of free text comes from (for a {@link RedactText} hook that treats them differently). */
export type TextField = 'failedReason' | 'stacktrace' | 'log' | 'output' | 'step' | 'audit' | 'progress';

/** A free-text redaction hook: the text as it should be shown. */
export type RedactText = (text: string, field: TextField) => string;

/** What a hidden value is replaced with. */
export const REDACTED = '[redacted]';

/** Levels of nesting shown; deeper values are replaced whole by {@link TOO_DEEP}. */
export const MAX_REDACT_DEPTH = 20;

/** What replaces a value nested deeper than {@link MAX_REDACT_DEPTH}. */
export const TOO_DEEP = `[redacted: nested deeper than ${MAX_REDACT_DEPTH} levels]`;

/**
 * Field names whose values the default redaction hides (case-insensitive, anywhere in the name):
 * passwords, secrets, tokens, API and access keys, authorization, credentials, private keys,
 * cookies, connection strings, JWTs and session ids.
 */
export const SECRET_NAMES =
  /pass(word|wd|phrase)?|secret|token|api[-_]?key|access[-_]?key|authorization|credential|private[-_]?key|cookie|conn(ection)?[-_]?str(ing)?|jwt|session[-_]?(id|key)/i;

/** The default redaction: values under secret-looking names (see {@link SECRET_NAMES}) become `[redacted]`. */
export const defaultRedact: Redact = (key, value) => (SECRET_NAMES.test(key) ? REDACTED : value);

/**
 * Hides the password of every URL in `text` (`postgres://app:s3cret@db/x` -> `postgres://app:[redacted]@db/x`).
 * Linear in the text (no regular expression that could backtrack over a long value).
 */
export function redactUrlPasswords(text: string): string {
  let at = text.indexOf('://');
  if (at < 0) return text;
  let out = '';
  let copied = 0;
  while (at >= 0) {
    // The scheme before '://': letters, digits, + - . (at most 32, starting with a letter).
    let s = at;
    while (s > 0 && at - s < 32 && /[a-z0-9+.-]/i.test(text[s - 1])) s--;
    const authorityStart = at + 3;
    let end = authorityStart;
    let colon = -1;
    let atSign = -1;
    // The authority ends at '/', '?', '#', whitespace, a quote, or 1,024 characters.
    while (end < text.length && end - authorityStart < 1024) {
      const c = text[end];
      if (c === '/' || c === '?' || c === '#' || c === '"' || c === "'" || c === '<' || c === '>' || /\s/.test(c)) break;
      if (c === '@') atSign = end;
      else if (c === ':' && atSign < 0 && colon < 0) colon = end;
      end++;
    }
    if (s < at && /[a-z]/i.test(text[s]) && colon >= 0 && atSign > colon + 1) {
      out += text.slice(copied, colon + 1) + REDACTED;
      copied = atSign;
    }
    at = text.indexOf('://', Math.max(end, at + 3));
  }
  return out + text.slice(copied);
}

// `name = value`, `name: value`, `"name": "value"` where the name is a secret-looking word (not
// followed by a letter: "passed", "tokens" and "secrets" are ordinary words in a log), with
// bounded quantifiers only, so the scan stays linear; and `Bearer`/`Basic` credentials.
const SECRET_PAIR =
  /(pass(?:word|wd|phrase)?|secret|token|api[-_]?key|access[-_]?key|authorization|credentials?|private[-_]?key|cookie|conn(?:ection)?[-_]?str(?:ing)?|jwt|session[-_]?(?:id|key))(?![a-z])([\w.-]{0,40}["']?[ \t]{0,5}[=:][ \t]{0,5}["']?)(?!\[redacted\]|Bearer |Basic )([^\s"',;&<>]{1,512})/gi;
const SCHEME_CREDENTIAL = /\b(Bearer|Basic)([ \t]{1,5})([A-Za-z0-9._~+/=-]{6,4096})/g;

/**
 * The default free-text redaction (best effort; see the module's comment): URL passwords,
 * `Bearer`/`Basic` credentials and `secret=value` pairs.
 */
export const defaultRedactText: RedactText = (text) =>
  redactUrlPasswords(text)
    .replace(SCHEME_CREDENTIAL, (_m, scheme: string, gap: string) => `${scheme}${gap}${REDACTED}`)
    .replace(SECRET_PAIR, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);

/** Applies a redaction to every value the dashboard shows. */
export class Redactor {
  constructor(
    private readonly redact: Redact = defaultRedact,
    private readonly redactText: RedactText = defaultRedactText,
  ) {}

  /**
   * A structured value with `redact` applied to every field at any depth; string values have their
   * URL passwords hidden; anything nested deeper than {@link MAX_REDACT_DEPTH} becomes {@link TOO_DEEP}.
   */
  value(value: unknown, path: string[] = []): unknown {
    if (typeof value === 'string') return redactUrlPasswords(value);
    if (value === null || typeof value !== 'object') return value;
    if (path.length >= MAX_REDACT_DEPTH) return TOO_DEEP;
    if (Array.isArray(value)) return value.map((v, i) => this.value(v, [...path, String(i)]));
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const childPath = [...path, key];
      const shown = this.redact(key, v, childPath);
      out[key] = shown === v ? this.value(v, childPath) : shown;
    }
    return out;
  }

  /** Free text as the text hook shows it. */
  text(text: string, field: TextField): string {
    return this.redactText(text, field);
  }

  /** Free text, or null/undefined as they are. */
  maybeText<T extends string | null | undefined>(text: T, field: TextField): T {
    return (typeof text === 'string' ? this.redactText(text, field) : text) as T;
  }
}
