/**
 * Time-zone vectors from issue 5: `nextFireTimes(pattern, tz)` from an exclusive instant must give
 * exactly these UTC fires, plus the cases croner's default options get wrong.
 */
import { Cron } from 'croner';
import { describe, expect, test } from 'vitest';
import { nextFireTimes } from '../../src/schedule/index.js';

const iso = (ms: number): string => new Date(ms).toISOString().replace(':00.000Z', 'Z');

function fires(pattern: string, tz: string, from: string, count: number): string[] {
  return nextFireTimes({ pattern, tz }, { from: Date.parse(from), count }).map(iso);
}

describe('issue 5 vectors', () => {
  const vectors: [pattern: string, tz: string, from: string, expected: string[]][] = [
    ['30 2 * * *', 'Europe/Paris', '2026-03-27T12:00Z', ['2026-03-28T01:30Z', '2026-03-29T01:00Z', '2026-03-30T00:30Z']],
    ['30 2 * * *', 'Europe/Paris', '2026-10-23T12:00Z', ['2026-10-24T00:30Z', '2026-10-25T00:30Z', '2026-10-26T01:30Z']],
    [
      '0 * * * *',
      'Europe/Paris',
      '2026-10-24T22:30Z',
      ['2026-10-24T23:00Z', '2026-10-25T00:00Z', '2026-10-25T01:00Z', '2026-10-25T02:00Z', '2026-10-25T03:00Z'],
    ],
    ['0 * * * *', 'Europe/Paris', '2026-03-28T23:30Z', ['2026-03-29T00:00Z', '2026-03-29T01:00Z', '2026-03-29T02:00Z']],
    ['30 2 * * *', 'America/New_York', '2026-03-07T12:00Z', ['2026-03-08T07:00Z', '2026-03-09T06:30Z']],
    ['30 1 * * *', 'America/New_York', '2026-10-31T12:00Z', ['2026-11-01T05:30Z', '2026-11-02T06:30Z']],
    ['30 2 * * *', 'Australia/Sydney', '2026-10-02T12:00Z', ['2026-10-02T16:30Z', '2026-10-03T16:00Z', '2026-10-04T15:30Z']],
    ['0 0 * * *', 'America/Santiago', '2026-09-04T12:00Z', ['2026-09-05T04:00Z', '2026-09-06T04:00Z', '2026-09-07T03:00Z']],
    ['0 0 * * *', 'Etc/GMT+1', '2026-06-01T12:00Z', ['2026-06-02T01:00Z']],
    ['0 9 1 * MON', 'UTC', '2026-05-31T00:00Z', ['2026-06-01T09:00Z', '2026-06-08T09:00Z', '2026-06-15T09:00Z', '2026-06-22T09:00Z']],
    ['*/20 * * * * *', 'UTC', '2026-06-01T00:00:00Z', ['2026-06-01T00:00:20.000Z', '2026-06-01T00:00:40.000Z', '2026-06-01T00:01Z']],
  ];

  test.each(vectors)('%s in %s from %s', (pattern, tz, from, expected) => {
    expect(fires(pattern, tz, from, expected.length)).toEqual(expected);
  });
});

describe('the cases croner gets wrong with its default fixedTimeRule', () => {
  // Paris: 2026-03-29 02:00 -> 03:00 (01:00Z); 2026-10-25 03:00 -> 02:00 (01:00Z).
  test('0,30 2 * * * on a spring-forward day fires once when the gap ends, then resumes', () => {
    expect(fires('0,30 2 * * *', 'Europe/Paris', '2026-03-28T12:00Z', 3)).toEqual([
      '2026-03-29T01:00Z', // 02:00 and 02:30 do not exist: once at 03:00 CEST
      '2026-03-30T00:00Z',
      '2026-03-30T00:30Z',
    ]);
  });

  test('30 1-3 * * * on a fall-back day fires 02:30 once (first pass)', () => {
    expect(fires('30 1-3 * * *', 'Europe/Paris', '2026-10-24T12:00Z', 5)).toEqual([
      '2026-10-24T23:30Z', // 01:30 CEST
      '2026-10-25T00:30Z', // 02:30 CEST, first pass; not again at 01:30Z
      '2026-10-25T02:30Z', // 03:30 CET
      '2026-10-26T00:30Z',
      '2026-10-26T01:30Z',
    ]);
  });

  test('30 1-3 * * * on a spring-forward day substitutes 02:30 by 03:00 and keeps 03:30', () => {
    expect(fires('30 1-3 * * *', 'Europe/Paris', '2026-03-28T22:00Z', 3)).toEqual([
      '2026-03-29T00:30Z', // 01:30 CET
      '2026-03-29T01:00Z', // 02:30 skipped: 03:00 CEST
      '2026-03-29T01:30Z', // 03:30 CEST
    ]);
  });

  test('croner with its default options really does get them wrong (why we set no-wildcard)', () => {
    const runs = (pattern: string, from: string, count: number): string[] =>
      new Cron(pattern, { timezone: 'Europe/Paris' }).nextRuns(count, new Date(from)).map((d) => iso(d.getTime()));
    expect(runs('0,30 2 * * *', '2026-03-28T12:00Z', 1)).toEqual(['2026-03-30T00:00Z']); // skips the night
    expect(runs('30 1-3 * * *', '2026-10-25T00:00Z', 2)).toEqual(['2026-10-25T00:30Z', '2026-10-25T01:30Z']); // twice
  });

  test('0 */2 * * * fires on both passes of the repeated hour, an hour apart', () => {
    expect(fires('0 */2 * * *', 'Europe/Paris', '2026-10-24T21:00Z', 4)).toEqual([
      '2026-10-24T22:00Z', // 00:00 CEST
      '2026-10-25T00:00Z', // 02:00 CEST
      '2026-10-25T01:00Z', // 02:00 CET
      '2026-10-25T03:00Z', // 04:00 CET
    ]);
  });

  test('an interval pattern skips wall times in the gap', () => {
    expect(fires('*/30 2-3 * * *', 'Europe/Paris', '2026-03-28T23:00Z', 3)).toEqual([
      '2026-03-29T01:00Z', // 03:00 CEST; 02:00 and 02:30 never happen
      '2026-03-29T01:30Z',
      '2026-03-30T00:00Z',
    ]);
  });
});

describe('other zones and edges', () => {
  test('Lord Howe: a 30-minute DST shift (02:00 -> 02:30 and 02:00 -> 01:30)', () => {
    // 2026-10-04 02:00 +10:30 -> 02:30 +11:00 (15:30Z on the 3rd).
    expect(fires('15 2 * * *', 'Australia/Lord_Howe', '2026-10-02T12:00Z', 3)).toEqual([
      '2026-10-02T15:45Z',
      '2026-10-03T15:30Z', // 02:15 does not exist: fires at 02:30 +11:00
      '2026-10-04T15:15Z',
    ]);
    // 2026-04-05 02:00 +11:00 -> 01:30 +10:30 (15:00Z on the 4th): 01:45 happens twice.
    expect(fires('45 1 * * *', 'Australia/Lord_Howe', '2026-04-03T12:00Z', 3)).toEqual([
      '2026-04-03T14:45Z',
      '2026-04-04T14:45Z', // first pass only
      '2026-04-05T15:15Z',
    ]);
    expect(fires('*/30 1 * * *', 'Australia/Lord_Howe', '2026-04-04T14:10Z', 3)).toEqual([
      '2026-04-04T14:30Z', // 01:30 first pass
      '2026-04-04T15:00Z', // 01:30 second pass
      '2026-04-05T14:30Z',
    ]);
  });

  test('Havana: the gap is at midnight, a midnight job fires when it ends (01:00)', () => {
    // 2026-03-08 00:00 -05:00 -> 01:00 -04:00 (05:00Z).
    expect(fires('0 0 * * *', 'America/Havana', '2026-03-06T12:00Z', 3)).toEqual([
      '2026-03-07T05:00Z',
      '2026-03-08T05:00Z',
      '2026-03-09T04:00Z',
    ]);
  });

  test('from is exclusive, also on the exact fire instant and with milliseconds', () => {
    expect(fires('0 9 * * *', 'UTC', '2026-06-01T09:00:00.000Z', 1)).toEqual(['2026-06-02T09:00Z']);
    expect(fires('0 9 * * *', 'UTC', '2026-06-01T08:59:59.999Z', 1)).toEqual(['2026-06-01T09:00Z']);
  });

  test('from on the second pass of a repeated hour finds the rest of that pass', () => {
    expect(fires('*/20 2 * * *', 'Europe/Paris', '2026-10-25T01:10Z', 2)).toEqual(['2026-10-25T01:20Z', '2026-10-25T01:40Z']);
    // a fixed time already run on the first pass is not run again
    expect(fires('40 2 * * *', 'Europe/Paris', '2026-10-25T01:10Z', 1)).toEqual(['2026-10-26T01:40Z']);
  });

  test('day-of-month and day-of-week are OR-ed; L, W and # work', () => {
    expect(fires('0 0 L * *', 'UTC', '2026-01-15T00:00Z', 3)).toEqual(['2026-01-31T00:00Z', '2026-02-28T00:00Z', '2026-03-31T00:00Z']);
    expect(fires('0 0 15W * *', 'UTC', '2026-08-01T00:00Z', 1)).toEqual(['2026-08-14T00:00Z']); // 15th is a Saturday
    expect(fires('0 0 * * 5#2', 'UTC', '2026-06-01T00:00Z', 2)).toEqual(['2026-06-12T00:00Z', '2026-07-10T00:00Z']);
    expect(fires('0 0 * * FRIL', 'UTC', '2026-06-01T00:00Z', 1)).toEqual(['2026-06-26T00:00Z']);
    expect(fires('0 0 13 * FRI', 'UTC', '2026-02-01T00:00Z', 4)).toEqual([
      '2026-02-06T00:00Z',
      '2026-02-13T00:00Z', // the 13th (a Friday too: once)
      '2026-02-20T00:00Z',
      '2026-02-27T00:00Z',
    ]);
  });

  test('nicknames, names and 6-field patterns', () => {
    expect(fires('@daily', 'Europe/Paris', '2026-06-01T12:00Z', 1)).toEqual(['2026-06-01T22:00Z']);
    expect(fires('0 0 * JAN-MAR MON-FRI', 'UTC', '2026-03-31T00:00Z', 1)).toEqual(['2027-01-01T00:00Z']);
    expect(fires('30 15 10 * * *', 'UTC', '2026-06-01T00:00Z', 1)).toEqual(['2026-06-01T10:15:30.000Z']);
  });
});
