/**
 * The dashboard's live stream (`api/stream`, Server-Sent Events): the overview now and every
 * interval, keep-alive comments, and its end when the client disconnects or the dashboard closes.
 */
import type { QueueOverview } from 'hopper-queue';
import { SECURITY_HEADERS } from './security.js';

/** The live stream: the overview now and every interval, keep-alive comments, ends on disconnect. */
export function overviewStream(
  request: Request,
  overview: () => Promise<QueueOverview[]>,
  interval: number,
  streams: Set<() => void>,
): Response {
  const encoder = new TextEncoder();
  let stop = (): void => undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      const send = async (): Promise<void> => {
        try {
          const current = await overview();
          if (!closed) controller.enqueue(encoder.encode(`event: overview\ndata: ${JSON.stringify(current)}\n\n`));
        } catch (error) {
          if (!closed) controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ error: (error as Error).message })}\n\n`));
        }
      };
      const tick = setInterval(() => void send(), interval);
      const keepAlive = setInterval(() => controller.enqueue(encoder.encode(': keep-alive\n\n')), 15_000);
      stop = () => {
        if (closed) return;
        closed = true;
        clearInterval(tick);
        clearInterval(keepAlive);
        streams.delete(stop);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      streams.add(stop);
      request.signal.addEventListener('abort', stop);
      void send();
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream', connection: 'keep-alive', ...SECURITY_HEADERS } });
}
