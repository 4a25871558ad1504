/**
 * A Redis server's own timing of the commands it ran (its slow log), for tests that bound how
 * long one call may hold the server, measured there rather than by a client whose wall time
 * includes its own CPU scheduling.
 */
import { Redis } from 'ioredis';

/** A slow-log entry: the command's arguments (each cut at 128 characters by Redis) and its time on the server. */
export interface SlowCall {
  args: string[];
  /** Time the server spent executing the command, ms. */
  ms: number;
}

/**
 * The slow-log entries of the Redis server at `url` that one of whose arguments contains
 * `marker` (a key prefix), oldest first. Redis logs a command that takes at least
 * `slowlog-log-slower-than` (10 ms by default) and keeps the last `slowlog-max-len` (128 by default).
 */
export async function slowCalls(url: string, marker: string): Promise<SlowCall[]> {
  const admin = new Redis(url);
  try {
    const entries = (await admin.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][];
    return entries
      .map(([, , micros, args]) => ({ args: args.map(String), ms: Number(micros) / 1000 }))
      .filter((e) => e.args.some((a) => a.includes(marker)))
      .reverse();
  } finally {
    admin.disconnect();
  }
}
