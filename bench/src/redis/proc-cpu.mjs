// CPU time of another process (redis-server) from Linux's /proc.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Clock ticks per second, the unit of utime/stime in /proc/<pid>/stat (`getconf CLK_TCK`,
 * 100 on most Linux systems: 10 ms resolution, which is why CPU is measured over whole runs).
 */
export function clockTicksPerSecond() {
  let output;
  try {
    output = execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  } catch (error) {
    throw new Error(`cannot read clock ticks per second with "getconf CLK_TCK": ${error.message}`);
  }
  const ticks = Number(output.trim());
  if (!Number.isInteger(ticks) || ticks <= 0) {
    throw new Error(`"getconf CLK_TCK" returned ${JSON.stringify(output.trim())}, not a positive integer`);
  }
  return ticks;
}

/**
 * User + system CPU time of process `pid` (all its threads), in milliseconds.
 * @param {number} pid
 * @param {number} ticksPerSecond from clockTicksPerSecond()
 */
export function processCpuMs(pid, ticksPerSecond) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    throw new Error(`cannot read CPU time of process ${pid} from /proc (Linux only): ${error.message}`);
  }
  // The command name (field 2) is in parentheses and may contain spaces: split after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, fields start at field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`unexpected /proc/${pid}/stat format: ${stat.slice(0, 200)}`);
  }
  return ((utime + stime) * 1000) / ticksPerSecond;
}
