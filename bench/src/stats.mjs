// Small statistics helpers shared by the scenarios (percentiles) and the report (medians).

/**
 * Nearest-rank percentile of an ascending-sorted array: the smallest value such that at least
 * `p`% of the samples are <= it. Always an observed sample, never an interpolation.
 * @param {ArrayLike<number>} sorted
 * @param {number} p in (0, 100]
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) throw new Error('percentile of an empty sample');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Name of a percentile in metric keys and labels: `p50`, `p99`..., and `max` for 100. */
export const percentileName = (p) => (p === 100 ? 'max' : `p${p}`);

/**
 * Sorts a copy of the samples numerically and returns the given percentiles, keyed by
 * percentileName (`p50`, `p95`..., `max`).
 * @param {ArrayLike<number>} samples
 * @param {number[]} ps
 */
export function percentiles(samples, ps) {
  const sorted = Float64Array.from(samples).sort();
  /** @type {Record<string, number>} */
  const out = {};
  for (const p of ps) out[percentileName(p)] = percentile(sorted, p);
  return out;
}

/**
 * Median, min and max of a set of run results. With an even count the median is the mean of
 * the two middle values.
 * @param {number[]} values
 */
export function summarize(values) {
  if (values.length === 0) throw new Error('summary of no runs');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1] };
}
