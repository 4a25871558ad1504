/**
 * The live switch, small: a BullMQ deployment built by the real `bullmq` package, BullMQ
 * producers adding and BullMQ workers running, moved to Hopper by the bridge (SIGKILLed twice and
 * restarted) while Hopper workers start and the BullMQ workers close; then the way back. Every
 * job added on either side runs exactly once; see live-switch.ts for the scenario and
 * test/scale/migrate-live.test.ts for the full size.
 */
import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';
import { figuresText, runLiveSwitch, SMALL } from './live-switch.js';
import { useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

describe('live switch', () => {
  it(
    'BullMQ producers and workers live, the bridge killed twice: every job once, delayed on time, schedulers once, flows whole, and back',
    { timeout: 120_000 },
    async () => {
      const bp = newBullPrefix();
      const f = await runLiveSwitch(env, SMALL, bp, (line) => console.log(line));
      console.log(figuresText(f));
      console.log(JSON.stringify({ occurrences: f.occurrences, schedulers: f.schedulerCounters, back: f.back.schedulers }));
      const v = f.verdict;
      expect(v.lost).toEqual([]);
      expect(v.doubled).toEqual([]);
      expect(v.unknown).toEqual([]);
      expect(v.ranEarly).toEqual([]);
      expect(v.added).toBeGreaterThan(SMALL.waiting + SMALL.delayedLong + SMALL.prioritized);
      expect(v.addedBySide.hopper).toBeGreaterThan(0);
      expect(v.ranBySide.bullmq).toBeGreaterThan(0);
      expect(v.early).toEqual([]);
      expect(v.lateness.count).toBeGreaterThanOrEqual(SMALL.delayedShort);
      expect(f.lastReport.lost).toBe(0);
      expect(f.lastReport.countsMatch).toBe(true);
      // Each occurrence instant runs once across the switch; an instant after the bridge started
      // that did not run is one Hopper's policies counted (missed after downtime, skipped by overlap).
      for (const [id, o] of Object.entries(f.occurrences)) {
        expect(o.twice).toEqual([]);
        expect(o.noInstant).toBe(0);
        expect(o.runs).toBeGreaterThanOrEqual(3);
        const counted = f.schedulerCounters[id];
        expect(o.missing.length).toBeLessThanOrEqual(counted.missed + counted.skippedByOverlap);
      }
      expect(f.dedupLost).toEqual([]);
      expect(f.flowsWrong).toEqual([]);
      expect(f.delayedMisplaced).toEqual([]);
      expect(f.back.report.lost).toBe(0);
      expect(f.back.delayedMisplaced).toEqual([]);
      expect(f.back.schedulers.length).toBe(3);
      expect(f.back.ranOnce).toBe(SMALL.delayedLong);
      expect(f.back.doubled).toEqual([]);
      expect(f.back.lost).toEqual([]);
      expect(f.back.occurrencesTwice).toBe(0);
    },
  );
});
