import { test } from 'vitest';
import { nextFireTimes } from '../../src/schedule/index.js';
const vec: [string, string, string, number][] = [
 ['30 2 * * *','Europe/Paris','2026-03-27T12:00Z',3],
 ['30 2 * * *','Europe/Paris','2026-10-23T12:00Z',3],
 ['0 * * * *','Europe/Paris','2026-10-24T22:30Z',5],
 ['0 * * * *','Europe/Paris','2026-03-28T23:30Z',3],
 ['30 2 * * *','America/New_York','2026-03-07T12:00Z',2],
 ['30 1 * * *','America/New_York','2026-10-31T12:00Z',2],
 ['30 2 * * *','Australia/Sydney','2026-10-02T12:00Z',3],
 ['0 0 * * *','America/Santiago','2026-09-04T12:00Z',3],
 ['0 0 * * *','Etc/GMT+1','2026-06-01T12:00Z',1],
 ['0 9 1 * MON','UTC','2026-05-31T00:00Z',4],
 ['*/20 * * * * *','UTC','2026-06-01T00:00:00Z',3],
 ['0,30 2 * * *','Europe/Paris','2026-03-28T12:00Z',3],
 ['30 1-3 * * *','Europe/Paris','2026-10-24T12:00Z',5],
 ['0 */2 * * *','Europe/Paris','2026-10-24T20:00Z',5],
];
test('scratch', () => {
  for (const [p,tz,from,n] of vec) {
    const t0 = performance.now();
    const r = nextFireTimes({ pattern: p, tz }, { from: Date.parse(from), count: n });
    console.log(p, tz, from, r.map((d)=>new Date(d).toISOString()).join(' '), (performance.now()-t0).toFixed(2));
  }
  for (const p of ['* 2 * 3 0L', '* * 2 * 3 0L', '0 0 31 2 *']) {
    const t0 = performance.now();
    try { nextFireTimes({ pattern: p, tz: 'Europe/Paris' }, { from: Date.parse('2026-01-01T00:00Z'), count: 1 }); } catch (e) { console.log(p, (e as Error).message, (e as any).reason); }
    console.log((performance.now()-t0).toFixed(2));
  }
  let t0 = performance.now();
  const r = nextFireTimes({ pattern: '* * * * * *', tz: 'Europe/Paris' }, { from: Date.parse('2026-01-01T00:00Z'), count: 10000 });
  console.log('10k', r.length, (performance.now()-t0).toFixed(2));
});
