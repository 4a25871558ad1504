/**
 * Error watch for tests: every `error` event of a tracked Worker, Queue, QueueEvents or
 * FlowProducer is recorded, and the test fails after its end unless it declared the error
 * expected (`env.expectErrors(...)`). Without a listener, Hopper drops `error` events silently,
 * which would hide a worker failing every call.
 */
import { EventEmitter } from 'node:events';

/** What a test may declare expected: any error, a message pattern, or a predicate. */
export type ErrorMatcher = true | RegExp | ((err: unknown) => boolean);

export class ErrorWatch {
  private readonly seen: { label: string; err: unknown }[] = [];
  private readonly expected: ErrorMatcher[] = [];

  /** Records the `error` events of `target` when it is an event emitter; returns it. */
  watch<T>(target: T, label: string): T {
    if (target instanceof EventEmitter) {
      target.on('error', (err: unknown) => {
        this.seen.push({ label, err });
        if (process.env.HOPPER_DEBUG) console.log(`${label} error`, err);
      });
    }
    return target;
  }

  /** Declares errors this test expects (all of them with `true`). */
  expect(matcher: ErrorMatcher): void {
    this.expected.push(matcher);
  }

  /** Errors seen so far (expected or not). */
  errors(): unknown[] {
    return this.seen.map((s) => s.err);
  }

  /** Throws listing the errors that no declaration covers. */
  check(): void {
    const unexpected = this.seen.filter((s) => !this.expected.some((m) => matches(m, s.err)));
    if (unexpected.length === 0) return;
    const lines = unexpected.slice(0, 10).map((s) => `${s.label}: ${describe(s.err)}`);
    if (unexpected.length > 10) lines.push(`... and ${unexpected.length - 10} more`);
    throw new Error(
      `Unexpected 'error' events (declare them with env.expectErrors(...) if the test provokes them):\n  ${lines.join('\n  ')}`,
    );
  }
}

function matches(matcher: ErrorMatcher, err: unknown): boolean {
  if (matcher === true) return true;
  if (matcher instanceof RegExp) return matcher.test(describe(err));
  return matcher(err);
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
