/**
 * A job's output stream, written by its processor (`job.stream.write`, `job.stream.end`): chunks
 * of text or JSON appended in order, fenced to the attempt like every other write, kept apart from
 * the return value. Writes made while a call is in flight are sent together in the next call (up
 * to 200 chunks), so a processor writing one token at a time costs a few calls, not one per token.
 * Readers: `queue.readStream` (api/output-reader.ts). See docs/streams.md.
 */
import type { Fence } from '../backend/backend.js';
import { WriteCode } from '../backend/backend.js';
import { InvalidDataError, InvalidStateError } from './errors.js';
import type { Job } from './job.js';
import { throwOnWriteCode } from './write-codes.js';

/** Most chunks per call (appendOutput.lua refuses more). */
const CHUNKS_PER_CALL = 200;
/** Entries a job's output stream keeps (older ones are trimmed, approximately). */
export const OUTPUT_MAX_LENGTH = 10_000;
/** Largest chunk, in characters of its text or JSON. */
export const OUTPUT_CHUNK_MAX = 1_000_000;

interface Pending {
  chunk: { json: boolean; value: string } | undefined;
  settle: (err?: Error) => void;
}

/** The writer of a job's output stream: `job.stream` in a processor. */
export class JobStream {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private seq = 0;
  private ended = false;
  private broken: Error | undefined;

  /** @internal */
  constructor(private readonly job: Job) {}

  /**
   * Appends `chunk` to the job's output: a string is sent as text, anything else as JSON. Resolves
   * when it is stored; rejects with LockLostError if this attempt no longer holds the job (then
   * every later write rejects too). Writes are stored in the order they were made.
   *
   * @example
   * for await (const token of model.stream(prompt)) await job.stream.write(token);
   * await job.stream.end();
   */
  write(chunk: unknown): Promise<void> {
    if (this.ended)
      return Promise.reject(new InvalidStateError(`job.stream.write: the output of job ${this.job.id} was ended (job.stream.end()).`));
    let value: string;
    let json = false;
    if (typeof chunk === 'string') {
      value = chunk;
    } else {
      let text: string | undefined;
      try {
        text = JSON.stringify(chunk);
      } catch (err) {
        return Promise.reject(
          new InvalidDataError(`job.stream.write: the chunk cannot be serialised as JSON (${(err as Error).message}).`),
        );
      }
      if (text === undefined)
        return Promise.reject(new InvalidDataError('job.stream.write takes a string or a JSON value, got undefined or a function.'));
      value = text;
      json = true;
    }
    if (value.length > OUTPUT_CHUNK_MAX) {
      return Promise.reject(
        new InvalidDataError(`job.stream.write: a chunk holds at most ${OUTPUT_CHUNK_MAX} characters, got ${value.length}: split it.`),
      );
    }
    return this.enqueue({ json, value });
  }

  /**
   * Marks this attempt's output complete: readers following it end once they have read it.
   * Later writes are refused. Calling it again does nothing.
   */
  end(): Promise<void> {
    if (this.ended) return this.flushing ?? Promise.resolve();
    this.ended = true;
    return this.enqueue(undefined);
  }

  /**
   * @internal resolves once every write made so far is stored or refused (never rejects), or
   * undefined when none is in flight. The attempt's outcome is recorded after it (runtime/executor.ts).
   */
  inFlight(): Promise<void> | undefined {
    return this.flushing;
  }

  private enqueue(chunk: Pending['chunk']): Promise<void> {
    const fence = this.fenceOrThrow();
    if (this.broken !== undefined) return handled(Promise.reject(this.broken));
    return handled(
      new Promise<void>((resolve, reject) => {
        this.pending.push({ chunk, settle: (err) => (err === undefined ? resolve() : reject(err)) });
        this.flushing ??= this.flush(fence);
      }),
    );
  }

  private fenceOrThrow(): Fence {
    const fence = this.job.fence;
    if (!fence) {
      throw new InvalidStateError(
        `job.stream is written by the processor running job ${this.job.id}; this Job was not handed to a processor (read the output with queue.readStream).`,
      );
    }
    return fence;
  }

  /** Sends what is pending, in calls of at most CHUNKS_PER_CALL chunks, until nothing is left. */
  private async flush(fence: Fence): Promise<void> {
    try {
      await this.job.ctx.ready();
    } catch (err) {
      this.broken = err instanceof Error ? err : new Error(String(err));
      for (const p of this.pending.splice(0)) p.settle(this.broken);
    }
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, CHUNKS_PER_CALL);
      const ended = batch.at(-1)?.chunk === undefined;
      const chunks = batch.flatMap((p) => (p.chunk ? [p.chunk] : []));
      let error: Error | undefined;
      try {
        const code = await this.job.ctx.backend.appendOutput(this.job.requireId(), chunks, ended, fence, ++this.seq, OUTPUT_MAX_LENGTH);
        if (code !== WriteCode.Done) throwOnWriteCode(this.job, code, 'write the output of');
      } catch (err) {
        error = err instanceof Error ? err : new Error(String(err));
      }
      if (error !== undefined) {
        // A refused or failed call: nothing after it is written (the order would break).
        this.broken = error;
        for (const p of [...batch, ...this.pending.splice(0)]) p.settle(error);
      } else {
        for (const p of batch) p.settle();
      }
    }
    this.flushing = undefined;
  }
}

/**
 * `promise`, marked handled: a processor that does not await a write (`void job.stream.write(x)`)
 * must not crash the process with an unhandled rejection when the write is refused (its attempt
 * lost the job). Whoever awaits it still gets the rejection.
 */
function handled(promise: Promise<void>): Promise<void> {
  promise.catch(() => undefined);
  return promise;
}
