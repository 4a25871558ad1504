/**
 * The validation layer's language: each option set is declared once as a {@link Spec} (what each
 * option accepts), and one checker walks a value against it. A refusal is an
 * {@link InvalidOptionsError} that names the option (a dotted path: `removeOnComplete.age`), the
 * value it got and what is accepted; an option the set does not know is refused with the closest
 * known name ("did you mean 'weighted'?"), so a typo never silently changes nothing.
 *
 * Specs are plain objects with a `check` function: no schema library, no allocation on the success
 * path (the add path validates each job's options; docs/performance.md).
 */
import { HopperError, InvalidOptionsError, showRefused, UnsupportedOptionError } from '../job/errors.js';

/**
 * The kind of a value, as {@link kindOf} names it: `typeof`, with `null` and arrays apart (an
 * `object` spec accepts neither).
 */
export type ValueKind = 'boolean' | 'number' | 'string' | 'object' | 'function' | 'array' | 'null' | 'other';

/** The {@link ValueKind} of `value`. */
export function kindOf(value: unknown): ValueKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'boolean' || type === 'number' || type === 'string' || type === 'object' || type === 'function' ? type : 'other';
}

/** What a Spec checks a value against. `path` names the option in errors. */
export interface Spec {
  /** What the option accepts, in words ("an integer from 0 to 100"): shown in errors and docs. */
  readonly accepted: string;
  /**
   * The only kind of value the spec can accept, when it has one: {@link anyOf} skips it for a
   * value of another kind instead of calling `check` (which would build an error to refuse it).
   */
  readonly kind?: ValueKind;
  /** Throws an {@link InvalidOptionsError} (or a more precise Hopper error) if `value` is not accepted. */
  check(value: unknown, path: string): void;
}

/** Longest delay a Node.js timer can wait: 2^31 - 1 ms (about 24.8 days). Longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Shows a refused value in a message: any value, even a hostile one (cycles, throwing getters, BigInt). */
export const showValue: (value: unknown) => string = showRefused;

/** The refusal of `value` at `path`: an InvalidOptionsError naming the option, the value and what is accepted. */
export function refuse(path: string, value: unknown, accepted: string, hint?: string): InvalidOptionsError {
  return InvalidOptionsError.of(path, value, accepted, hint);
}

/** Whether `value` is a plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A number spec: `integer` or not, within [min, max], finite always. */
export function numberSpec(opts: { integer?: boolean; min?: number; max?: number; minExclusive?: boolean; unit?: string }): Spec {
  const integer = opts.integer ?? false;
  const min = opts.min ?? (integer ? Number.MIN_SAFE_INTEGER : -Number.MAX_VALUE);
  const max = opts.max ?? (integer ? Number.MAX_SAFE_INTEGER : Number.MAX_VALUE);
  const exclusive = opts.minExclusive ?? false;
  const unit = opts.unit ? ` (${opts.unit})` : '';
  const unbounded = max >= (integer ? Number.MAX_SAFE_INTEGER : Number.MAX_VALUE);
  // Phrased as the checks before the validation layer were, which code and tests match.
  const accepted = integer
    ? min === 1 && !exclusive
      ? `a positive integer${unbounded ? '' : `, at most ${max}`}${unit}`
      : unbounded
        ? `an integer >= ${min}${unit}`
        : `an integer from ${min} to ${max}${unit}`
    : `a finite number ${exclusive ? `> ${min}` : `>= ${min}`}${unbounded ? '' : `, at most ${max}`}${unit}`;
  return {
    accepted,
    kind: 'number',
    check(value, path) {
      if (
        typeof value !== 'number' ||
        !(exclusive ? value > min : value >= min) ||
        !(value <= max) ||
        (integer ? !Number.isInteger(value) : !Number.isFinite(value))
      ) {
        throw refuse(path, value, accepted);
      }
    },
  };
}

/** An integer >= `min` (default 0), at most `max` (default Number.MAX_SAFE_INTEGER). */
export function int(min = 0, max = Number.MAX_SAFE_INTEGER, unit?: string): Spec {
  return numberSpec({ integer: true, min, max, unit });
}

/** A positive integer (>= 1), at most `max`. */
export function positiveInt(max = Number.MAX_SAFE_INTEGER, unit?: string): Spec {
  return numberSpec({ integer: true, min: 1, max, unit });
}

/** A finite number >= `min` (default 0), at most `max`. */
export function finite(min = 0, max = Number.MAX_VALUE, unit?: string): Spec {
  return numberSpec({ min, max, unit });
}

/**
 * A duration in ms that a timer waits on: an integer from `min` (default 0) to 2^31 - 1 (about
 * 24.8 days), Node's longest timer; a longer one would fire at once.
 */
export function duration(min = 0): Spec {
  return numberSpec({ integer: true, min, max: MAX_TIMER_MS, unit: 'ms; 2^31 - 1 is about 24.8 days' });
}

/** A boolean. */
export const bool: Spec = {
  accepted: 'a boolean (true or false)',
  kind: 'boolean',
  check(value, path) {
    if (typeof value !== 'boolean') throw refuse(path, value, 'a boolean (true or false)');
  },
};

/** A function. */
export const func: Spec = {
  accepted: 'a function',
  kind: 'function',
  check(value, path) {
    if (typeof value !== 'function') throw refuse(path, value, 'a function');
  },
};

/**
 * Whether a string holds a lone surrogate (half of a UTF-16 pair): it has no UTF-8 form, so Redis
 * and SQLite would store U+FFFD instead and two different ids would collide.
 */
export function hasLoneSurrogate(value: string): boolean {
  // Fast path: most strings hold no surrogate at all.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return true;
  }
  return false;
}

/** A string of `min` (default 1) to `max` characters, well-formed (no lone surrogate). */
export function str(min = 1, max = Number.MAX_SAFE_INTEGER): Spec {
  const accepted =
    max === Number.MAX_SAFE_INTEGER
      ? min > 0
        ? 'a non-empty string'
        : 'a string'
      : `a ${min > 0 ? 'non-empty ' : ''}string of at most ${max} characters`;
  return {
    accepted,
    kind: 'string',
    check(value, path) {
      if (typeof value !== 'string' || value.length < min || value.length > max) throw refuse(path, value, accepted);
      if (hasLoneSurrogate(value))
        throw refuse(path, value, accepted, 'it holds a lone surrogate (half of a UTF-16 pair), which has no UTF-8 form');
    },
  };
}

/** One of the given values (compared with ===). */
export function oneOf(values: readonly unknown[]): Spec {
  const accepted = `one of ${values.map((v) => showValue(v)).join(', ')}`;
  return {
    accepted,
    check(value, path) {
      if (!values.includes(value)) throw refuse(path, value, accepted);
    },
  };
}

/**
 * Any of `specs` (the first that accepts); refused with every form listed. A spec of another
 * {@link Spec.kind} than the value's is skipped, not tried: an accepted value builds no error on
 * the way (a refusal costs several µs, and the add path validates each job's options).
 */
export function anyOf(specs: readonly Spec[], accepted = specs.map((s) => s.accepted).join(', or ')): Spec {
  return {
    accepted,
    check(value, path) {
      const kind = kindOf(value);
      for (const spec of specs) {
        if (spec.kind !== undefined && spec.kind !== kind) continue;
        try {
          spec.check(value, path);
          return;
        } catch (err) {
          if (!(err instanceof InvalidOptionsError)) throw err;
        }
      }
      throw refuse(path, value, accepted);
    },
  };
}

/** A spec checked by a function of its own (for rules with BullMQ's key phrases, or cross-field ones). */
export function custom(accepted: string, check: (value: unknown, path: string) => void): Spec {
  return { accepted, check };
}

/** Accepted as is (an option whose value the component checks itself, or any value: `data`). */
export function anything(accepted = 'any value'): Spec {
  return { accepted, check: () => undefined };
}

/**
 * A BullMQ option Hopper does not implement: refused with an {@link UnsupportedOptionError} that
 * says what to use instead, unless its value is one of `allows` (they ask for what Hopper does).
 */
export function unsupported(owner: string, option: string, message: string, allows: readonly unknown[] = []): Spec {
  return {
    accepted: allows.length > 0 ? `only ${allows.map((v) => showValue(v)).join(', ')} (not supported)` : 'nothing (not supported)',
    check(value) {
      if (allows.includes(value)) return;
      throw new UnsupportedOptionError(message, owner, option);
    },
  };
}

/** An object's fields, and checks across them. */
export interface ObjectSpec extends Spec {
  /** The known fields (undefined values count as absent). */
  readonly fields: ReadonlyMap<string, Spec>;
}

/** Levenshtein distance, capped: for "did you mean" hints only (never on the success path). */
function distance(a: string, b: string): number {
  const al = a.toLowerCase();
  const bl = b.toLowerCase();
  if (al === bl) return 0;
  const row = Array.from({ length: bl.length + 1 }, (_, i) => i);
  for (let i = 1; i <= al.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= bl.length; j++) {
      const next = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (al[i - 1] === bl[j - 1] ? 0 : 1));
      prev = next;
    }
  }
  return row[bl.length];
}

/** The known name closest to `key` (a typo), if one is close enough. */
export function closest(key: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(key, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
}

/**
 * An object with known fields. A field it does not know is refused (with the closest known name),
 * unless `open` (an object another library defines: ioredis's options), or `typosOnly` and no
 * known name is close to it (see {@link closest}): then it is left alone, as BullMQ leaves it, and
 * `typosOnly` (a function) hears its name once, to say so.
 * `refine` runs after every field was accepted, for rules across fields. `what` names the object
 * in the message when the value is not an object at all.
 */
export function object(
  fields: Record<string, Spec>,
  options: {
    what?: string;
    open?: boolean;
    typosOnly?: (key: string) => void;
    refine?: (value: Record<string, unknown>, path: string) => void;
  } = {},
): ObjectSpec {
  const map = new Map(Object.entries(fields));
  const names = [...map.keys()];
  const accepted =
    options.what ?? `an object with ${names.length > 6 ? `options such as ${names.slice(0, 6).join(', ')}` : names.join(', ')}`;
  const prefixOf = (path: string): string => (path === '' ? '' : `${path}.`);
  return {
    accepted,
    kind: 'object',
    fields: map,
    check(value, path) {
      if (!isObject(value)) throw refuse(path || 'options', value, accepted);
      const at = prefixOf(path);
      for (const key in value) {
        const spec = map.get(key);
        const v = value[key];
        if (spec === undefined) {
          if (options.open || v === undefined) continue;
          const near = closest(key, names);
          if (near === undefined && options.typosOnly) {
            options.typosOnly(key);
            continue;
          }
          throw InvalidOptionsError.unknown(`${at}${key}`, v, near === undefined ? names : [near], near !== undefined);
        }
        if (v !== undefined) spec.check(v, `${at}${key}`);
      }
      options.refine?.(value, path);
    },
  };
}

/**
 * Runs `spec` on `value` and turns anything that is not a Hopper error (a getter that throws, a
 * Proxy trap) into an InvalidOptionsError: validation never lets a raw error through.
 */
export function validate(spec: Spec, value: unknown, path: string): void {
  try {
    spec.check(value, path);
  } catch (err) {
    if (err instanceof HopperError) throw err;
    throw new InvalidOptionsError(
      `${path || 'options'} could not be read (${err instanceof Error ? err.message : showValue(err)}): pass plain data, without getters that throw.`,
      { cause: err },
    );
  }
}
