/**
 * Anything a processor throws, made safe to record: a value that is not an Error (a BigInt, a
 * cycle, a Symbol, null, an object whose getters throw) or an Error whose own `message`, `stack`
 * or `name` getter throws. Nothing here ever throws, whatever it is given: the worker records the
 * failure with a readable reason instead of leaving the job active and its slot taken.
 *
 * The sandbox child mirrors `showValue` in plain JavaScript (runtime/sandbox/child-source.ts).
 */
import { inspect } from 'node:util';

/** A thrown value's parts, each a string. */
export interface ThrownParts {
  name: string;
  message: string;
  stack: string;
}

/** The prefix of the reason of a value thrown that is not an Error. */
export const NON_ERROR_PREFIX = 'Processor threw a non-Error value: ';

/** Longest text `showValue` returns (a huge thrown object must not become a huge reason). */
const SHOWN_MAX = 2_000;

/**
 * A value shown as text, never throwing: its JSON when it has one, else Node's inspection (which
 * shows `10n`, `Symbol(x)`, cycles and getters without calling them), else its type.
 */
export function showValue(value: unknown): string {
  let shown: string | undefined;
  try {
    shown = JSON.stringify(value);
  } catch {
    shown = undefined;
  }
  if (shown === undefined) {
    try {
      shown = inspect(value, { depth: 2, breakLength: Infinity, getters: false, customInspect: false, showProxy: true });
    } catch {
      shown = `a value of type ${typeof value}`;
    }
  }
  return shown.length > SHOWN_MAX ? `${shown.slice(0, SHOWN_MAX)}...` : shown;
}

/** Reads `value[key]` as a string, or undefined when it is not one or its getter throws. */
function readString(value: object, key: 'name' | 'message' | 'stack'): string | undefined {
  try {
    const field = (value as Record<string, unknown>)[key];
    return typeof field === 'string' ? field : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `value` is an Error (false when the check itself throws: a Proxy's trap). */
function isError(value: unknown): value is Error {
  try {
    return value instanceof Error;
  } catch {
    return false;
  }
}

/**
 * The parts of anything thrown: an Error's own name, message and stack (a getter that throws
 * reads as a note saying so), or for any other value a message that shows it. Never throws.
 */
export function thrownParts(value: unknown): ThrownParts {
  if (typeof value === 'string') return { name: 'Error', message: value, stack: '' };
  if (isError(value)) {
    const message = readString(value, 'message');
    return {
      name: readString(value, 'name') ?? 'Error',
      message: message ?? "(the error's message could not be read: its getter threw or is not a string)",
      stack: readString(value, 'stack') ?? '',
    };
  }
  return { name: 'Error', message: `${NON_ERROR_PREFIX}${showValue(value)}`, stack: '' };
}

/**
 * Anything thrown as an Error that is safe to read: the value itself when it is an Error whose
 * name, message and stack read as strings (so `instanceof` and its own fields stay as thrown);
 * otherwise a new Error carrying its parts (an Error's prototype kept, so `instanceof
 * UnrecoverableError` still holds). Never throws.
 */
export function toError(value: unknown): Error {
  if (isError(value) && readString(value, 'message') !== undefined && readString(value, 'name') !== undefined) {
    // `stack` may be absent (a plain object made an Error by its prototype): only a throwing one is replaced.
    let stackReadable = true;
    try {
      const stack: unknown = value.stack;
      stackReadable = stack === undefined || typeof stack === 'string';
    } catch {
      stackReadable = false;
    }
    if (stackReadable) return value;
  }
  const parts = thrownParts(value);
  const error = new Error(parts.message);
  if (isError(value)) {
    try {
      Object.setPrototypeOf(error, Object.getPrototypeOf(value) as object | null);
    } catch {
      // A prototype that cannot be read: a plain Error.
    }
  }
  // Own data properties: the prototype's getters (or a Proxy's) are never called again.
  Object.defineProperty(error, 'name', { value: parts.name, writable: true, configurable: true });
  Object.defineProperty(error, 'message', { value: parts.message, writable: true, configurable: true });
  Object.defineProperty(error, 'stack', { value: parts.stack, writable: true, configurable: true });
  return error;
}
