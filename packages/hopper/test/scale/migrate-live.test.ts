/**
 * The live switch at full size (npm run test:scale): a BullMQ 6 deployment of 10,000 waiting,
 * 2,000 delayed over the next days (and 200 due seconds after the switch), 500 prioritized, 200
 * failed, 50 flows, 3 job schedulers and deduplicated jobs, with BullMQ producers adding and BullMQ
 * workers running; the bridge SIGKILLed twice and restarted, Hopper workers starting, the BullMQ
 * workers closed mid-run; then the way back. Prints the figures quoted in docs/migrating.md.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';
import { figuresText, FULL, runLiveSwitch } from '../migrate/live-switch.js';
import { bullPrefix, deleteKeys } from '../migrate/bullmq-deployment.js';

const env = useHopper();
const prefixes: string[] = [];
afterEach(async () => {
  for (const p of prefixes.splice(0)) await deleteKeys(env.url, `${p}:*`);
});

describe('live switch at full size', () => {
  it('every job added on either side runs once through two SIGKILLs of the bridge; delayed on time; schedulers once; and back', async () => {
    const bp = bullPrefix();
    prefixes.push(bp);
    const f = await runLiveSwitch(env, FULL, bp, (line) => console.log(line));
    console.log(`live switch, full size (${new Date().toISOString().slice(0, 10)}):\n${figuresText(f)}`);
    const v = f.verdict;
    expect(v.lost).toEqual([]);
    expect(v.doubled).toEqual([]);
    expect(v.unknown).toEqual([]);
    expect(v.ranEarly).toEqual([]);
    expect(v.early).toEqual([]);
    expect(v.lateness.count).toBeGreaterThanOrEqual(FULL.delayedShort);
    expect(f.lastReport.lost).toBe(0);
    expect(f.lastReport.countsMatch).toBe(true);
    for (const [id, o] of Object.entries(f.occurrences)) {
      expect(o.twice).toEqual([]);
      expect(o.noInstant).toBe(0);
      const counted = f.schedulerCounters[id];
      expect(o.missing.length).toBeLessThanOrEqual(counted.missed + counted.skippedByOverlap);
    }
    expect(f.dedupLost).toEqual([]);
    expect(f.flowsWrong).toEqual([]);
    expect(f.delayedMisplaced).toEqual([]);
    expect(f.back.report.lost).toBe(0);
    expect(f.back.delayedMisplaced).toEqual([]);
    expect(f.back.schedulers.length).toBe(3);
    expect(f.back.ranOnce).toBe(FULL.delayedLong);
    expect(f.back.doubled).toEqual([]);
    expect(f.back.lost).toEqual([]);
    expect(f.back.occurrencesTwice).toBe(0);
  });
});
