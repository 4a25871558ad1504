/**
 * What Bull Board sees of a Hopper job: the Job itself behind a view that redacts every value it
 * shows (data, options, progress, return value, failed reason, stack traces; the same rules as
 * Hopper's dashboard) and, while the adapter is read-only, refuses every method that changes the
 * job. Other properties pass through, so Bull Board features that read more of a job keep working.
 */
import { SchedulerJobError, type Job } from 'hopper-queue';
import { REDACTED, TOO_DEEP, type Redactor } from 'hopper-queue-dashboard/redaction';

/** Methods of a job that only read it (anything else changes it). */
const READS = /^(get[A-Z]|is[A-Z]|has[A-Z]|to[A-Z]|as[A-Z]|toJSON$|asJSON$|requireId$)/;

/** The redacted fields of a job's plain JSON form. */
function redactedJson(json: Record<string, unknown>, redactor: Redactor): Record<string, unknown> {
  return {
    ...json,
    data: redactor.value(json.data),
    opts: redactor.value(json.opts),
    progress: typeof json.progress === 'string' ? redactor.text(json.progress, 'progress') : redactor.value(json.progress),
    returnvalue: redactor.value(json.returnvalue),
    failedReason: redactor.maybeText(json.failedReason as string | undefined, 'failedReason'),
    stacktrace: Array.isArray(json.stacktrace) ? json.stacktrace.map((l) => redactor.text(String(l), 'stacktrace')) : json.stacktrace,
  };
}

/** Whether `value` holds a redaction placeholder (saving it back would overwrite a secret with it). */
export function holdsPlaceholder(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(REDACTED) || value === TOO_DEEP;
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value as Record<string, unknown>).some(holdsPlaceholder);
}

/** The error a refused change throws (Bull Board answers it as its error reply, status from `statusCode`). */
export class RefusedError extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
    this.name = 'RefusedError';
  }
}

/** A redacted view of `job`; its changes are refused while `readOnly()` says so, and edits holding placeholders always. */
export function jobView(job: Job, redactor: Redactor, readOnly: () => boolean): Job {
  const fields: Record<string, () => unknown> = {
    data: () => redactor.value(job.data),
    opts: () => redactor.value(job.opts),
    progress: () => (typeof job.progress === 'string' ? redactor.text(job.progress, 'progress') : redactor.value(job.progress)),
    returnvalue: () => redactor.value(job.returnvalue),
    failedReason: () => redactor.maybeText(job.failedReason, 'failedReason'),
    stacktrace: () => (job.stacktrace ?? []).map((l) => redactor.text(String(l), 'stacktrace')),
  };
  return new Proxy(job, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in fields) return fields[prop]();
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      if (prop === 'toJSON' || prop === 'asJSONSandbox')
        return () => redactedJson((value as () => Record<string, unknown>).call(target), redactor);
      if (prop === 'asJSON')
        // The stored form: values as JSON strings, so redact the parsed values and serialise again.
        return () => {
          const raw = (value as () => Record<string, unknown>).call(target);
          const parsed = redactedJson(target.toJSON() as unknown as Record<string, unknown>, redactor);
          return {
            ...raw,
            data: JSON.stringify(parsed.data),
            opts: parsed.opts,
            progress: parsed.progress,
            returnvalue: JSON.stringify(parsed.returnvalue ?? null),
            failedReason: parsed.failedReason,
            stacktrace: JSON.stringify(parsed.stacktrace),
          };
        };
      if (READS.test(prop)) return (value as (...a: unknown[]) => unknown).bind(target);
      // Every change of a Job is async: a refusal is a rejected promise, as its failure would be.
      return (...args: unknown[]) => {
        if (readOnly())
          return Promise.reject(
            new RefusedError(
              `This Bull Board is read-only for queue "${target.queueName}": create the HopperAdapter with { readOnlyMode: false } to allow changes.`,
              405,
            ),
          );
        if ((prop === 'updateData' || prop === 'update') && holdsPlaceholder(args[0]))
          return Promise.reject(
            new RefusedError(
              'The new data holds a redaction placeholder ("[redacted]"): saving it would overwrite the hidden value. Change the job from your code instead.',
              400,
            ),
          );
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        // Removing a scheduler's pending run is refused (it would stop the schedule): a 400 that
        // says so, not Bull Board's 500. (The adapter's getArmedJobSchedulerId catches it first.)
        return prop === 'remove' && result instanceof Promise
          ? result.catch((err: unknown) => {
              throw err instanceof SchedulerJobError ? new RefusedError(err.message, 400) : err;
            })
          : result;
      };
    },
  });
}
