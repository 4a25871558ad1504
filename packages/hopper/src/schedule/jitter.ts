/**
 * Deterministic jitter: the same scheduler and instant always get the same delay, in every
 * process, so retries, restarts and concurrent upserts agree on an occurrence's due time.
 */

/**
 * The delay (integer ms) to add to the occurrence of `schedulerId` at `instant`: uniform-ish in
 * `[0, jitterMs)`, derived only from `(schedulerId, instant)`, and never reaching
 * `nextInstant` (so a delayed occurrence is due before the next one: the result is below
 * `nextInstant - instant`). 0 when `jitterMs < 1` or there is no room.
 *
 * @example
 * jitterFor('reports', Date.parse('2026-06-01T09:00Z'), 60_000); // e.g. 41237, every time
 */
export function jitterFor(schedulerId: string, instant: number, jitterMs: number, nextInstant?: number | null): number {
  let bound = Number.isFinite(jitterMs) ? Math.floor(jitterMs) : 0;
  if (nextInstant != null && Number.isFinite(nextInstant)) {
    bound = Math.min(bound, Math.ceil(nextInstant - instant));
  }
  if (bound <= 1) return 0;
  return Math.floor(unitHash(`${schedulerId}\u0000${instant}`) * bound);
}

/**
 * A hash of a string to [0, 1): two 32-bit multiply-xorshift lanes (the cyrb53 construction)
 * combined into 53 bits. Not cryptographic; stable across platforms and versions of Node.
 */
function unitHash(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const bits = 4294967296 * (h2 & 0x1fffff) + (h1 >>> 0); // 21 bits of h2 above 32 of h1
  return bits / 2 ** 53;
}
