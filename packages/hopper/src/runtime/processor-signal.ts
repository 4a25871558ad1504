/**
 * Whether a processor can read its abort signal (its third argument). An AbortController costs
 * a few microseconds per job to create and collect, a noticeable share of a no-op job's CPU: the
 * worker creates one per attempt only when the processor can observe it, or when something
 * aborts the attempt (then it is created already aborted, should anything ask for it).
 */

/** An arrow function's head: `async`, then `(params)` or a single parameter, then `=>`. */
const ARROW = /^(?:async\s*)?(?:\((?<list>[^()]*)\)|(?<single>[A-Za-z_$][\w$]*))\s*=>/;
/** A function expression or declaration's head, or a method's (`name(params) {`). */
const FUNCTION = /^(?:async\s+)?(?:function\b\s*\*?\s*[A-Za-z_$]?[\w$]*|\*?\s*[A-Za-z_$][\w$]*)\s*\((?<list>[^()]*)\)\s*\{/;
/** A plain parameter: an identifier, no default value, destructuring, rest or comment. */
const PLAIN = /^[A-Za-z_$][\w$]*$/;

/**
 * Whether `fn`, called as `fn(job, token, signal)`, may read `signal`. It may not only when its
 * source shows it is an arrow function, a function or a method with at most two plain
 * parameters (no default value, destructuring or rest parameter) that, unless it is an arrow
 * function, never names `arguments`, and names no `eval`. Anything else counts as reading it:
 * three or more parameters, bound and native functions (`[native code]`), transpiled code that
 * passes `arguments` on, a source this check does not recognise.
 *
 * @example
 * mayReadSignal(async (job) => job.data);               // false
 * mayReadSignal(async (job, token, signal) => signal);  // true
 * mayReadSignal(function (job) { return arguments[2]; }); // true
 */
export function mayReadSignal(fn: (...args: never[]) => unknown): boolean {
  if (fn.length >= 3) return true;
  let source: string;
  try {
    source = Function.prototype.toString.call(fn);
  } catch {
    return true;
  }
  // A bound function or a proxy shows no source: what it calls is unknown.
  if (source.includes('[native code]')) return true;
  const arrow = ARROW.exec(source);
  const head = arrow ?? FUNCTION.exec(source);
  if (!head) return true;
  const list = head.groups?.single ?? head.groups?.list ?? '';
  const params = list.trim() === '' ? [] : list.split(',').map((param) => param.trim());
  if (params.length > 2 || !params.every((param) => PLAIN.test(param))) return true;
  if (/\beval\b/.test(source)) return true;
  return !arrow && /\barguments\b/.test(source);
}
