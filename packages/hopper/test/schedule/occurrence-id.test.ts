/** Occurrence ids: written in BullMQ's form (`sched:`), read in it and in an earlier version's (`repeat:`). */
import { describe, expect, it } from 'vitest';
import { isOccurrenceId, occurrenceId, parseOccurrenceId, triggeredOccurrenceId } from '../../src/schedule/occurrence-id.js';

describe('occurrence ids', () => {
  it("are sched:<schedulerId>:<instant>; a triggered run's has a trigger segment", () => {
    expect(occurrenceId('nightly', 1_767_236_400_000)).toBe('sched:nightly:1767236400000');
    expect(triggeredOccurrenceId('nightly', 42)).toBe('sched:nightly:trigger:42');
  });

  it('read back in both prefixes, with colons in the scheduler id', () => {
    for (const prefix of ['sched:', 'repeat:']) {
      expect(parseOccurrenceId(`${prefix}nightly:1000`)).toEqual({ schedulerId: 'nightly', instant: 1000, triggered: false });
      expect(parseOccurrenceId(`${prefix}bird:colibri:::500:1000`)).toEqual({
        schedulerId: 'bird:colibri:::500',
        instant: 1000,
        triggered: false,
      });
      expect(parseOccurrenceId(`${prefix}b:trigger:77`)).toEqual({ schedulerId: 'b', instant: 77, triggered: true });
      expect(parseOccurrenceId(`${prefix}report::::0 3 * * *:trigger:77`)).toEqual({
        schedulerId: 'report::::0 3 * * *',
        instant: 77,
        triggered: true,
      });
    }
  });

  it('a pending run is never a triggered one: its scheduler id may end in :trigger', () => {
    expect(parseOccurrenceId('sched:x:trigger:5', true)).toEqual({ schedulerId: 'x:trigger', instant: 5, triggered: false });
  });

  it('other ids are not occurrences', () => {
    for (const id of ['42', 'sched:', 'sched:x', 'sched:x:', 'sched:x:12a', 'repeat::5x', 'other:x:5', 'Repeat:x:5']) {
      expect(parseOccurrenceId(id)).toBeUndefined();
      expect(isOccurrenceId(id)).toBe(false);
    }
    expect(isOccurrenceId('sched:x:5')).toBe(true);
  });
});
