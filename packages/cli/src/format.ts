/**
 * Plain-text output: aligned tables, durations and times, as the `hopper` commands print them
 * when `--json` is not given.
 */

/** Renders rows as a table with a header, columns left-aligned and padded to their widest cell. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map((cell) => String(cell)))];
  const widths = header.map((_, col) => Math.max(...cells.map((row) => (row[col] ?? '').length)));
  return cells.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]))).join('  ')).join('\n');
}

/** A duration in the largest unit that keeps it short: `850ms`, `12s`, `4m 05s`, `3h 02m`, `2d 4h`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1_000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** An epoch-ms instant as ISO 8601 (UTC), or `-`. */
export function instant(ms: number | null | undefined): string {
  return ms === null || ms === undefined || !Number.isFinite(ms) || ms <= 0 ? '-' : new Date(ms).toISOString();
}

/** Shortens text to `max` characters on one line (newlines become spaces). */
export function clip(text: string | null | undefined, max = 60): string {
  if (!text) return '';
  const line = text.replace(/\s+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
