/**
 * How a durable step's record is stored, in both backends: a JSON object `{ v: result, ms, at }`
 * for a success, `{ e: message, ms, at }` for a failure (recordStep.lua and continueJob.lua tell
 * a stored success by its `{"v":` opening). The seam passes StepWrite and StepRecord instead, so
 * job/ never sees these letters.
 */
import type { ContinueResult, StepRecord, StepWrite } from './records.js';
import { WriteCode } from './requests.js';

/** A step's outcome as the stored JSON text. */
export function encodeStep(step: StepWrite): string {
  return step.ok
    ? `{"v":${step.json},"ms":${step.durationMs},"at":${step.at}}`
    : JSON.stringify({ e: step.error, ms: step.durationMs, at: step.at });
}

/** The stored JSON text of the successful step a turn's add records (continueJob): its result is the next turn's id. */
export function encodeTurnStep(nextId: string, at: number): string {
  return encodeStep({ ok: true, json: JSON.stringify(nextId), durationMs: 0, at });
}

/** A stored step record as the seam's StepRecord. */
export function decodeStep(stored: string): StepRecord {
  const r = JSON.parse(stored) as { v?: unknown; e?: string; ms: number; at: number };
  return 'v' in r ? { ok: true, result: r.v, durationMs: r.ms, at: r.at } : { ok: false, error: r.e ?? '', durationMs: r.ms, at: r.at };
}

/** Whether a stored step record is a success (which is never replaced). */
export function isStoredSuccess(stored: string): boolean {
  return stored.startsWith('{"v":');
}

/** continueJob's result from the step it recorded (or found): the next turn's id is the step's result. */
export function continued(step: StepRecord): ContinueResult {
  return { code: WriteCode.Done, nextId: step.ok ? String(step.result) : undefined, detail: '' };
}
