/**
 * Replies bounded in bytes, not in counts: a {@link Budget} walks the (already redacted) values a
 * reply will carry and cuts what does not fit, marking each cut (`… [cut: N bytes]`) and counting
 * them, so a job with a 1 MB data object and a hundred 1 MB log lines answers in a few MB, and says so.
 */

/** What a cut string ends with: `… [cut: <bytes of the whole> bytes]`. */
export const cutMark = (bytes: number): string => `… [cut: ${bytes} bytes]`;

/** Bytes of `s` as a JSON string (quotes and escapes included). */
function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s));
}

/** Byte budget of one reply. */
export class Budget {
  /** Bytes left for the reply. */
  left: number;
  /** Values cut so far. */
  cuts = 0;

  constructor(
    private readonly maxResponseBytes: number,
    /** Largest single value (bytes). */
    readonly maxValueBytes: number,
  ) {
    this.left = maxResponseBytes;
  }

  /** Whether anything was fitted yet (a route that bounds its reply itself uses its budget). */
  get used(): boolean {
    return this.left !== this.maxResponseBytes || this.cuts > 0;
  }

  /** Whether the reply has room for more (a reader stops reading once it has not). */
  get spent(): boolean {
    return this.left <= 0;
  }

  /** `value` with what does not fit in min(`cap`, what is left) cut, the bytes it takes counted. */
  fit(value: unknown, cap = this.maxValueBytes): unknown {
    const room = { n: Math.min(cap, Math.max(0, this.left)) };
    const start = room.n;
    const out = this.walk(value, room);
    this.left -= start - room.n;
    return out;
  }

  /** A string within min(`cap`, what is left). */
  fitText(text: string, cap = this.maxValueBytes): string {
    return this.fit(text, cap) as string;
  }

  // Cut values keep their type (a string stays a string, an array an array, an object an
  // object), so a reader that maps over a list or reads a field still can.
  private walk(value: unknown, room: { n: number }): unknown {
    if (typeof value === 'string') return this.cutString(value, room);
    if (value === null || typeof value !== 'object') {
      room.n -= 8;
      return value;
    }
    room.n -= 2;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        if (room.n <= 0) {
          this.cuts++;
          out.push(`[cut: ${value.length - i} more items]`);
          break;
        }
        out.push(this.walk(value[i], room));
        room.n -= 1;
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    const entries = Object.entries(value as Record<string, unknown>);
    for (let i = 0; i < entries.length; i++) {
      const [key, v] = entries[i];
      if (room.n <= 0) {
        this.cuts++;
        out['[cut]'] = `${entries.length - i} more fields`;
        break;
      }
      room.n -= jsonBytes(key) + 2;
      out[key] = this.walk(v, room);
    }
    return out;
  }

  private cutString(s: string, room: { n: number }): string {
    const bytes = jsonBytes(s);
    const limit = Math.min(room.n, this.maxValueBytes);
    if (bytes <= limit) {
      room.n -= bytes;
      return s;
    }
    this.cuts++;
    const whole = Buffer.byteLength(s);
    const mark = cutMark(whole);
    const keep = limit - mark.length - 2;
    if (keep <= 0) {
      room.n -= mark.length + 2;
      return mark.slice(2); // "[cut: N bytes]"
    }
    // Shrink a prefix until it fits (JSON escapes may make it larger than its length).
    let prefix = s.slice(0, keep);
    while (prefix.length > 0 && jsonBytes(prefix) > keep) prefix = prefix.slice(0, Math.floor(prefix.length * 0.8));
    // Never end on half of a surrogate pair.
    if (/[\uD800-\uDBFF]$/.test(prefix)) prefix = prefix.slice(0, -1);
    room.n -= jsonBytes(prefix) + mark.length;
    return prefix + mark;
  }
}
