/**
 * What a fenced write's code means for its caller: the typed error each refusal becomes (used by
 * every file of job methods).
 */
import { WriteCode, writeApplied } from '../backend/backend.js';
import { CancelledError, InvalidStateError, JobNotFoundError, LockLostError } from './errors.js';

/** The job a write was for: named in the messages. */
interface Written {
  id?: string;
  queueName: string;
}

/**
 * Throws the error matching a fenced write's code. `op` is BullMQ's name of the operation: the
 * message then starts with BullMQ's key phrase (`Missing key for job <id>. <op>`, `Job <id> is not
 * in the <state> state. <op>`), which code migrated from BullMQ matches.
 */
export function throwOnWriteCode(job: Written, code: WriteCode, what: string, op?: string, requiredState?: string): void {
  if (code === WriteCode.Missing) {
    const phrase = op === undefined ? '' : `Missing key for job ${job.id}. ${op}: `;
    throw new JobNotFoundError(`${phrase}Cannot ${what} job ${job.id} in queue "${job.queueName}": it no longer exists.`);
  }
  if (code === WriteCode.NotActive) {
    const phrase = op === undefined || requiredState === undefined ? '' : `Job ${job.id} is not in the ${requiredState} state. ${op}: `;
    throw new InvalidStateError(`${phrase}Cannot ${what} job ${job.id} in queue "${job.queueName}": it is not in a state that allows it.`);
  }
  if (code === WriteCode.StaleAttempt) {
    throw new LockLostError(
      `Cannot ${what} job ${job.id} in queue "${job.queueName}": this attempt no longer holds the job (its lock expired and it was rescued, or another attempt took over). The write was rejected.`,
    );
  }
}

/**
 * Throws the error matching a holder's move code (manual processing, moves from a processor).
 * `op` is BullMQ's name of the operation: a refusal then starts with BullMQ's key phrase, `Job
 * <id> is not in the active state. <op>` or (with `lockPhrase`, or a stale token) `Missing lock
 * for job <id>. <op>`.
 */
export function throwOnMoveCode(job: Written, code: WriteCode, what: string, op?: string, lockPhrase = false): void {
  if (writeApplied(code)) return;
  if (code === WriteCode.RefusedCancelled) {
    throw new CancelledError(
      `Cannot ${what} job ${job.id} in queue "${job.queueName}": it was cancelled (queue.cancelJob). A cancelled job only ends, as cancelled; retry it to run it again.`,
    );
  }
  if (code === WriteCode.StaleAttempt || code === WriteCode.NotActive) {
    const phrase =
      op === undefined
        ? ''
        : code === WriteCode.NotActive && !lockPhrase
          ? `Job ${job.id} is not in the active state. ${op}: `
          : `Missing lock for job ${job.id}. ${op}: `;
    throw new LockLostError(
      `${phrase}Cannot ${what} job ${job.id} in queue "${job.queueName}": this token does not hold it (it was rescued, moved or finished).`,
    );
  }
  throwOnWriteCode(job, code, what);
}
