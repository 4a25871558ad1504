/**
 * HopperMetrics: Hopper's metrics in a prom-client Registry (the user's own, or a new one). Each
 * family is registered as a collect-on-scrape metric; one scrape reads Redis once (the families
 * share one snapshot), so a scrape costs a few round trips per queue, and nothing runs between
 * scrapes.
 */
import { Admin, InvalidOptionsError, type QueueConnection } from 'hopper-queue';

/** The longest delay one Node timer takes (2^31-1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;
import { Registry } from 'prom-client';
import { buildFamilies, buildFamily, familySpecs, type Family } from './families.js';
import { readSnapshot, type Snapshot } from './snapshot.js';

/** Options of {@link HopperMetrics}. */
export interface HopperMetricsOptions {
  /** How to reach Redis (ioredis options, a URL, or an ioredis instance you keep). Ignored with `admin`. */
  connection?: QueueConnection;
  /** The key prefix of the queues (default `hopper`). Ignored with `admin`. */
  prefix?: string;
  /** An Admin to read through (you keep ownership: close() does not close it). */
  admin?: Admin;
  /** The queues to export (default: every queue under the prefix, listed at each scrape). */
  queues?: string[];
  /** The registry to register in (default: a new one, `metrics.registry`). */
  registry?: Registry;
  /** A prefix for every metric name. Default `hopper_`. */
  metricPrefix?: string;
  /** Export the top N groups by backlog per queue (`hopper_group_jobs`). Default 0: no group labels. */
  groups?: { top: number };
  /** How long one reading serves scrapes, ms (several families read in one scrape share it). Default 1000. */
  cacheMs?: number;
  /**
   * The longest a scrape waits for Hopper's state, ms. Default 5,000: under Prometheus's default
   * scrape timeout (10 s). Past it (or when a part fails: Redis down, unresponsive) the scrape
   * answers with what was read, and `hopper_scrape_error` is 1.
   */
  scrapeTimeoutMs?: number;
}

/** The default of {@link HopperMetricsOptions.scrapeTimeoutMs}, ms. */
export const DEFAULT_SCRAPE_TIMEOUT_MS = 5_000;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Longest `cacheMs`: a day. */
const MAX_CACHE_MS = 86_400_000;

/** The options HopperMetrics knows (startMetricsServer adds its own): any other is refused, a typo changes nothing otherwise. */
const KNOWN_OPTIONS = ['connection', 'prefix', 'admin', 'queues', 'registry', 'metricPrefix', 'groups', 'cacheMs', 'scrapeTimeoutMs'];

/** Refuses an option no one reads (with the closest known name), so a typo never silently changes nothing. */
export function refuseUnknownOptions(opts: object, known: readonly string[], owner: string): void {
  for (const key of Object.keys(opts)) {
    if (known.includes(key) || (opts as Record<string, unknown>)[key] === undefined) continue;
    const near = known.find((name) => name.toLowerCase() === key.toLowerCase() || editDistance(name, key) <= 2);
    throw invalid(`Unknown ${owner} option ${key}: ${near ? `did you mean '${near}'?` : `use ${known.join(', ')}.`}`);
  }
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = next;
    }
  }
  return row[b.length];
}

/** Hopper's typed error for a bad option (typed as Error: its declaration hides its Error base from the linter). */
export function invalid(message: string): Error {
  return new InvalidOptionsError(message);
}

/**
 * Registers Hopper's metrics in a prom-client registry.
 *
 * @example
 * import { Registry } from 'prom-client';
 * const registry = new Registry();
 * const metrics = new HopperMetrics({ connection: { host: '127.0.0.1', port: 6379 }, registry });
 * app.get('/metrics', async (_req, res) => res.type(registry.contentType).send(await registry.metrics()));
 * // at shutdown: await metrics.close();
 */
export class HopperMetrics {
  /** The registry the metrics are registered in. */
  readonly registry: Registry;
  private readonly admin: Admin;
  private readonly ownsAdmin: boolean;
  private readonly queues: string[] | undefined;
  private readonly groupsTop: number;
  private readonly cacheMs: number;
  private readonly scrapeTimeoutMs: number;
  private reading: { settledAt: number | undefined; snapshot: Promise<Snapshot> } | undefined;
  private closed = false;

  constructor(opts: HopperMetricsOptions = {}) {
    // Every option is checked before anything is opened or registered: a refusal leaves nothing behind.
    if (typeof opts !== 'object' || opts === null) throw invalid(`HopperMetrics options must be an object, got ${String(opts)}.`);
    refuseUnknownOptions(opts, KNOWN_OPTIONS, 'HopperMetrics');
    const prefix = opts.metricPrefix ?? 'hopper_';
    if (typeof prefix !== 'string' || (prefix !== '' && !NAME.test(prefix))) {
      throw invalid(`metricPrefix must match [a-zA-Z_:][a-zA-Z0-9_:]*, got ${JSON.stringify(opts.metricPrefix)}.`);
    }
    const top = opts.groups?.top ?? 0;
    if (!Number.isInteger(top) || top < 0 || top > 1000) {
      throw invalid(`groups.top must be an integer from 0 to 1000, got ${JSON.stringify(opts.groups?.top)}.`);
    }
    const cacheMs = opts.cacheMs ?? 1000;
    if (typeof cacheMs !== 'number' || !Number.isFinite(cacheMs) || cacheMs < 0 || cacheMs > MAX_CACHE_MS) {
      throw invalid(`cacheMs must be a number of ms from 0 to ${MAX_CACHE_MS} (a day), got ${String(cacheMs)}.`);
    }
    if (opts.queues !== undefined && (!Array.isArray(opts.queues) || opts.queues.some((q) => typeof q !== 'string' || q === ''))) {
      throw invalid(`queues must be an array of queue names, got ${JSON.stringify(opts.queues)}.`);
    }
    const scrapeTimeoutMs = opts.scrapeTimeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS;
    if (!Number.isFinite(scrapeTimeoutMs) || scrapeTimeoutMs <= 0 || scrapeTimeoutMs > MAX_TIMER_MS) {
      throw invalid(`scrapeTimeoutMs must be a number of ms from 1 to ${MAX_TIMER_MS}, got ${String(opts.scrapeTimeoutMs)}.`);
    }
    const registry = opts.registry ?? new Registry();
    if (typeof registry.getSingleMetric !== 'function' || typeof registry.registerMetric !== 'function') {
      throw invalid('registry must be a prom-client Registry.');
    }
    // A second HopperMetrics on one registry (same metricPrefix) would collide on every name: refused
    // here, before anything is registered and before the Admin (and its connection) is created.
    const taken = familySpecs().find((spec) => registry.getSingleMetric(prefix + spec.name) !== undefined);
    if (taken) {
      throw invalid(
        `The registry already has a metric named ${prefix + taken.name}: another HopperMetrics (or your own metric) is registered in it. ` +
          'Use one HopperMetrics per registry (close() leaves its metrics registered: registry.clear() removes them), or give this one another metricPrefix. Nothing was registered.',
      );
    }
    this.registry = registry;
    this.queues = opts.queues;
    this.groupsTop = top;
    this.cacheMs = cacheMs;
    this.scrapeTimeoutMs = scrapeTimeoutMs;
    this.ownsAdmin = !opts.admin;
    this.admin = opts.admin ?? new Admin({ connection: opts.connection, prefix: opts.prefix });
    for (const spec of familySpecs()) {
      const name = prefix + spec.name;
      // prom-client's registry takes any object with a name and get() (its collect-on-scrape contract).
      this.registry.registerMetric({
        name,
        help: spec.help,
        type: spec.type,
        aggregator: 'sum',
        get: async (): Promise<Family> => buildFamily(spec, prefix, await this.snapshot()),
      } as unknown as Parameters<Registry['registerMetric']>[0]);
    }
  }

  /** Reads every family now (one snapshot), without the text format: for tests and custom exporters. */
  async collect(): Promise<Family[]> {
    return buildFamilies('', await this.snapshot());
  }

  /** The registry's metrics in the Prometheus text format. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  /** Closes the Admin it created (not one you passed). The registry keeps the metrics registered. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsAdmin) await this.admin.close();
  }

  private snapshot(): Promise<Snapshot> {
    const r = this.reading;
    // A reading in flight, or settled within cacheMs, serves this call too.
    if (r && (r.settledAt === undefined || Date.now() - r.settledAt <= this.cacheMs)) return r.snapshot;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.scrapeTimeoutMs);
      timer.unref();
    });
    const snapshot = readSnapshot(this.admin, this.queues, this.groupsTop, deadline).finally(() => clearTimeout(timer));
    const reading: { settledAt: number | undefined; snapshot: Promise<Snapshot> } = { settledAt: undefined, snapshot };
    this.reading = reading;
    snapshot.then(
      (s) => {
        reading.settledAt = Date.now();
        // An incomplete reading is not kept: the next scrape tries again.
        if (s.error !== undefined && this.reading === reading) this.reading = undefined;
      },
      () => {
        if (this.reading === reading) this.reading = undefined;
      },
    );
    return snapshot;
  }
}
