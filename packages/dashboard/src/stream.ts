/**
 * The dashboard's live stream (`api/stream`, Server-Sent Events). One {@link OverviewHub} per
 * dashboard reads the overview once per interval and sends the same event to every open stream,
 * so Redis sees the same load with one stream or two hundred. Each stream sends keep-alive
 * comments, re-checks its caller's credentials periodically (a revoked `authorize` session ends
 * it), ends a client that stops reading, and ends when the client goes away or the dashboard closes.
 */
import type { QueueOverview } from 'hopper-queue';
import { SECURITY_HEADERS } from './security.js';

type Send = (event: string) => void;

/** Unread events a stream may hold before its client counts as gone (it is then ended). */
const MAX_UNREAD = 64;
/** Keep-alive comment period (ms): proxies close idle connections. */
const KEEP_ALIVE_MS = 15_000;

/** Reads the overview once per interval for every open stream. */
export class OverviewHub {
  private readonly subscribers = new Set<Send>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private latest: { at: number; event: string } | undefined;
  private reading: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly overview: () => Promise<QueueOverview[]>,
    private readonly intervalMs: number,
    /** The message an error event shows (never a stack or a path). */
    private readonly describe: (error: unknown) => string,
  ) {}

  /** Streams open now. */
  get size(): number {
    return this.subscribers.size;
  }

  /** Adds a stream: it gets the latest overview at once (read now if stale), then every interval. */
  subscribe(send: Send): () => void {
    this.subscribers.add(send);
    if (this.latest && Date.now() - this.latest.at < this.intervalMs) send(this.latest.event);
    else void this.read().then(() => this.latest && this.subscribers.has(send) && send(this.latest.event));
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.intervalMs);
      this.timer.unref?.();
    }
    return () => {
      this.subscribers.delete(send);
      if (this.subscribers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Stops reading (the dashboard is closing: a read cut short by it is no error to report). */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.subscribers.clear();
  }

  private async tick(): Promise<void> {
    await this.read();
    if (!this.latest) return;
    for (const send of [...this.subscribers]) send(this.latest.event);
  }

  /** Reads the overview once, however many ask at the same time. */
  private read(): Promise<void> {
    this.reading ??= (async () => {
      try {
        const current = await this.overview();
        this.latest = { at: Date.now(), event: `event: overview\ndata: ${JSON.stringify(current)}\n\n` };
      } catch (error) {
        if (this.closed) return;
        this.latest = { at: Date.now(), event: `event: error\ndata: ${JSON.stringify({ error: this.describe(error) })}\n\n` };
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}

/** What one stream needs. */
export interface StreamOptions {
  request: Request;
  hub: OverviewHub;
  /** Whether the caller's credentials still hold (re-checked every `recheckMs`). */
  recheck: () => Promise<boolean>;
  recheckMs: number;
  /** Frees the caller's stream slot (called once, when the stream ends). */
  release: () => void;
  /** The dashboard's open streams (to end them all on close). */
  streams: Set<() => void>;
}

/** The live stream: the overview now and every interval, keep-alive comments, ends on disconnect or a failed re-check. */
export function overviewStream({ request, hub, recheck, recheckMs, release, streams }: StreamOptions): Response {
  const encoder = new TextEncoder();
  let stop = (): void => undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let closed = false;
        const send = (text: string): void => {
          if (closed) return;
          // A client that stopped reading: end its stream rather than queue events for it forever.
          if ((controller.desiredSize ?? 0) < -MAX_UNREAD) return stop();
          controller.enqueue(encoder.encode(text));
        };
        const unsubscribe = hub.subscribe(send);
        const keepAlive = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
        const check = setInterval(() => {
          recheck().then(
            (ok) => {
              if (ok) return;
              send(`event: end\ndata: ${JSON.stringify({ reason: 'Your session ended: sign in again.' })}\n\n`);
              stop();
            },
            () => stop(),
          );
        }, recheckMs);
        keepAlive.unref?.();
        check.unref?.();
        stop = () => {
          if (closed) return;
          closed = true;
          unsubscribe();
          clearInterval(keepAlive);
          clearInterval(check);
          streams.delete(stop);
          release();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        streams.add(stop);
        if (request.signal.aborted) stop();
        else request.signal.addEventListener('abort', stop);
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: 8 },
  );
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream', connection: 'keep-alive', 'x-accel-buffering': 'no', ...SECURITY_HEADERS },
  });
}
