/**
 * The audit trail of the dashboard's actions: every action route a signed-in caller reaches is
 * recorded, done or not (refused 403, failed 400/404/409/500), with the ids a bulk action named
 * and its outcome, redacted and bounded in size. Refusals are recorded at most
 * {@link REFUSALS_PER_MINUTE} a minute per caller (the next entry says how many were not), so a
 * caller cannot push the real entries out of the log (it keeps the newest 1,000) by failing on purpose.
 */
import type { Admin, AuditEntry } from 'hopper-queue';
import type { Redactor } from './redaction.js';

/** An entry as the dashboard records it: the engine's fields and what the dashboard adds. */
export interface DashboardAuditEntry extends AuditEntry {
  /** `done`, `refused` (403: role, CSRF, origin) or `failed` (any other error). */
  outcome: 'done' | 'refused' | 'failed';
  /** The HTTP status of the reply. */
  status: number;
  /** The job ids a bulk action or a replay named (as many as fit in {@link MAX_AUDIT_IDS_BYTES}). */
  ids?: string[];
  /** How many more ids there were than `ids` lists. */
  idsOmitted?: number;
  /** Refusals and failures of this caller not recorded since its previous entry (over the rate). */
  unrecorded?: number;
}

/** Bytes of `detail` kept per entry (the rest is cut, marked). */
export const MAX_AUDIT_DETAIL_BYTES = 4096;
/** Bytes of ids listed per entry. */
export const MAX_AUDIT_IDS_BYTES = 16_384;
/** Refused or failed actions recorded per caller per minute. */
export const REFUSALS_PER_MINUTE = 30;

/** Text cut to `max` bytes, marked. */
function bounded(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  const mark = `… [cut: ${Buffer.byteLength(text)} bytes]`;
  const room = max - Buffer.byteLength(mark);
  let cut = text.slice(0, room);
  while (Buffer.byteLength(cut) > room) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return cut + mark;
}

/** What one action did, for {@link AuditTrail.record}. */
export interface AuditRecord {
  who: string;
  /** The caller's limiter key (refusals are counted per caller). */
  caller: string;
  action: string;
  target: string;
  status: number;
  /** The reply's body (done) or the error's message. */
  detail: unknown;
  ids?: readonly unknown[];
}

/** Records actions in the prefix's audit log through the Admin. */
export class AuditTrail {
  private readonly refusals = new Map<string, { since: number; recorded: number; skipped: number }>();

  constructor(
    private readonly admin: Admin,
    private readonly redactor: Redactor,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records one action (resolves once written; a refusal over the rate is only counted). */
  async record(r: AuditRecord): Promise<void> {
    const outcome = r.status < 300 ? 'done' : r.status === 403 ? 'refused' : 'failed';
    const at = this.now();
    let unrecorded = 0;
    let count = this.refusals.get(r.caller);
    if (outcome !== 'done') {
      if (!count) {
        count = { since: at, recorded: 0, skipped: 0 };
        this.refusals.set(r.caller, count);
        if (this.refusals.size > 10_000) this.refusals.delete(this.refusals.keys().next().value as string);
      }
      if (at - count.since >= 60_000) {
        count.since = at;
        count.recorded = 0;
      }
      if (count.recorded >= REFUSALS_PER_MINUTE) {
        count.skipped++;
        return;
      }
      count.recorded++;
    }
    if (count && count.skipped > 0) {
      unrecorded = count.skipped;
      count.skipped = 0;
    }
    const raw = typeof r.detail === 'string' ? r.detail : JSON.stringify(r.detail ?? null);
    const entry: DashboardAuditEntry = {
      at,
      who: r.who,
      action: r.action,
      target: r.target,
      outcome,
      status: r.status,
      detail: bounded(this.redactor.text(raw, 'audit'), MAX_AUDIT_DETAIL_BYTES),
    };
    if (r.ids) {
      const ids: string[] = [];
      let bytes = 0;
      for (const id of r.ids) {
        const s = String(id);
        bytes += Buffer.byteLength(s) + 3;
        if (bytes > MAX_AUDIT_IDS_BYTES) break;
        ids.push(s);
      }
      entry.ids = ids;
      if (ids.length < r.ids.length) entry.idsOmitted = r.ids.length - ids.length;
    }
    if (unrecorded > 0) entry.unrecorded = unrecorded;
    await this.admin.recordAudit(entry);
  }
}
