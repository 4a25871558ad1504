/**
 * What one caller may ask of the dashboard: request bodies and replies bounded in bytes, requests
 * and live streams per caller (429 beyond), and failed sign-ins per client address (429 while
 * locked out). The counters live in the dashboard's memory, one set per dashboard.
 */
import { invalidOption } from './invalid.js';
import { HttpError } from './security.js';

/** The dashboard's limits; each has a default (see {@link DEFAULT_LIMITS}). */
export interface DashboardLimits {
  /** Largest request body accepted (bytes; default 1 MiB: a bulk action of 1,000 long ids fits). Larger: 413. */
  maxBodyBytes: number;
  /**
   * Largest reply (bytes of JSON, default 4 MiB). Values that do not fit are cut and marked
   * (`… [cut: N bytes]`), the reply says how many were (`x-hopper-cut` header; `cut` in a job view).
   */
  maxResponseBytes: number;
  /** Largest single value shown (a job's data, a log line, an output chunk; bytes, default 256 KiB). */
  maxValueBytes: number;
  /** Requests one caller (a token, a user, an address with `auth: false`) may have running at once (default 32). */
  requestsInFlight: number;
  /** Requests one caller may make per minute (default 1,200, bursts included). */
  requestsPerMinute: number;
  /** Live streams (`api/stream`) one caller may hold open (default 8: one per open tab). */
  streamsPerCaller: number;
  /** Live streams open at once in all (default 200). */
  streams: number;
  /** Failed sign-ins (wrong token or password) one client address may make per window before it is locked out (default 10). */
  failedSignIns: number;
  /** The failed sign-in window, and the lockout that follows it (ms, default 5 minutes). */
  signInWindowMs: number;
}

/** The default limits. */
export const DEFAULT_LIMITS: Readonly<DashboardLimits> = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxResponseBytes: 4 * 1024 * 1024,
  maxValueBytes: 256 * 1024,
  requestsInFlight: 32,
  requestsPerMinute: 1200,
  streamsPerCaller: 8,
  streams: 200,
  failedSignIns: 10,
  signInWindowMs: 5 * 60_000,
});

/** The limits from the options, each checked (a mistake fails at start with InvalidOptionsError naming it). */
export function checkLimits(given: Partial<DashboardLimits> | undefined): DashboardLimits {
  if (given !== undefined && (given === null || typeof given !== 'object'))
    throw invalidOption('limits must be an object of numbers (see DashboardLimits).');
  const out: DashboardLimits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(given ?? {})) {
    if (!(key in DEFAULT_LIMITS))
      throw invalidOption(`limits.${key} is not a dashboard limit (known: ${Object.keys(DEFAULT_LIMITS).join(', ')}).`);
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > Number.MAX_SAFE_INTEGER)
      throw invalidOption(`limits.${key} must be a positive integer, not ${String(value)}.`);
    out[key as keyof DashboardLimits] = value;
  }
  if (out.maxValueBytes > out.maxResponseBytes) out.maxValueBytes = out.maxResponseBytes;
  return out;
}

/** Keys remembered per counter map at most (oldest dropped first): memory stays bounded whatever callers do. */
const MAX_KEYS = 10_000;

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_KEYS) map.delete(map.keys().next().value as string);
}

/** Per-caller and per-address counters, and the 429s they lead to. */
export class Limiter {
  private readonly inFlight = new Map<string, number>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly streamsOf = new Map<string, number>();
  private streamCount = 0;
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    readonly limits: DashboardLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Starts a request of `caller`: refuses it (429) past the caller's rate or running requests.
   * Returns the function that ends it (call it once, when the reply is built).
   */
  begin(caller: string): () => void {
    const now = this.now();
    const perMinute = this.limits.requestsPerMinute;
    const bucket = this.buckets.get(caller) ?? { tokens: perMinute, at: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + ((now - bucket.at) * perMinute) / 60_000);
    bucket.at = now;
    if (bucket.tokens < 1) {
      remember(this.buckets, caller, bucket);
      const wait = Math.ceil(((1 - bucket.tokens) * 60_000) / perMinute / 1000);
      throw new HttpError(429, `Too many requests: at most ${perMinute} a minute per caller (limits.requestsPerMinute).`, {
        'retry-after': String(Math.max(1, wait)),
      });
    }
    const running = this.inFlight.get(caller) ?? 0;
    if (running >= this.limits.requestsInFlight)
      throw new HttpError(429, `Too many requests at once: at most ${this.limits.requestsInFlight} per caller (limits.requestsInFlight).`, {
        'retry-after': '1',
      });
    bucket.tokens -= 1;
    remember(this.buckets, caller, bucket);
    this.inFlight.set(caller, running + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const n = (this.inFlight.get(caller) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(caller);
      else this.inFlight.set(caller, n);
    };
  }

  /** Opens a live stream of `caller` (429 past the caps); returns the function that closes it. */
  openStream(caller: string): () => void {
    const mine = this.streamsOf.get(caller) ?? 0;
    if (mine >= this.limits.streamsPerCaller)
      throw new HttpError(
        429,
        `Too many live streams: at most ${this.limits.streamsPerCaller} per caller (limits.streamsPerCaller); close another tab.`,
        { 'retry-after': '5' },
      );
    if (this.streamCount >= this.limits.streams)
      throw new HttpError(429, `Too many live streams: at most ${this.limits.streams} in all (limits.streams).`, { 'retry-after': '5' });
    this.streamsOf.set(caller, mine + 1);
    this.streamCount++;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.streamCount--;
      const n = (this.streamsOf.get(caller) ?? 1) - 1;
      if (n <= 0) this.streamsOf.delete(caller);
      else this.streamsOf.set(caller, n);
    };
  }

  /** Refuses (429) a sign-in from `address` while it is locked out after too many failures. */
  checkSignIn(address: string): void {
    const entry = this.failures.get(address);
    if (!entry) return;
    const left = entry.since + this.limits.signInWindowMs - this.now();
    if (left <= 0) {
      this.failures.delete(address);
      return;
    }
    if (entry.count >= this.limits.failedSignIns)
      throw new HttpError(
        429,
        `Too many failed sign-ins from this address: try again in ${Math.ceil(left / 1000)} s (limits.failedSignIns per limits.signInWindowMs).`,
        { 'retry-after': String(Math.ceil(left / 1000)) },
      );
  }

  /** Counts a failed sign-in from `address`. */
  failedSignIn(address: string): void {
    const now = this.now();
    const entry = this.failures.get(address);
    if (!entry || entry.since + this.limits.signInWindowMs <= now) remember(this.failures, address, { count: 1, since: now });
    else entry.count++;
  }
}
