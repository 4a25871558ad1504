/**
 * A job's output stream as Server-Sent Events, for Node's `http` and what builds on it (Express:
 * `req`/`res`; Fastify: `request.raw`/`reply.raw` after `reply.hijack()`). Resumes from the
 * browser's `Last-Event-ID`, keeps the connection alive with a comment every 15 s, stops reading
 * when the client goes away, and can cancel the job then (a generation nobody reads stops
 * spending). See docs/streams.md.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_TIMER_MS } from '../clock/timers.js';
import { InvalidOptionsError } from '../job/errors.js';
import type { ReadStreamOptions } from './output-reader.js';
import type { Queue } from './queue.js';

/** Options of {@link sendStreamAsSSE}. */
export interface StreamSSEOptions {
  /** Cancel the job (`queue.cancelJob`) when the client disconnects before its output ended. Default false. */
  cancelOnDisconnect?: boolean;
  /** Interval of the keep-alive comment, ms. Default 15,000. */
  keepAliveMs?: number;
  /** Which attempts' chunks to send (see `queue.readStream`). Default 'latest'. */
  attempts?: ReadStreamOptions['attempts'];
}

/** What happened to the stream: ended (output or job finished), or the client left first. */
export type StreamSSEOutcome = 'ended' | 'disconnected';

/**
 * Sends job `jobId`'s output to `res` as Server-Sent Events: each chunk is an event `chunk` with
 * its entry id as the SSE id and `{"attempt":n,"data":...}` as data; the end is an event `end`.
 * Resolves when the stream ended or the client disconnected.
 *
 * @example
 * app.get('/generations/:id', (req, res) => sendStreamAsSSE(queue, req.params.id, req, res, { cancelOnDisconnect: true }));
 */
export async function sendStreamAsSSE(
  queue: Pick<Queue, 'readStream' | 'cancelJob'>,
  jobId: string,
  req: IncomingMessage,
  res: ServerResponse,
  opts: StreamSSEOptions = {},
): Promise<StreamSSEOutcome> {
  const keepAliveMs = opts.keepAliveMs ?? 15_000;
  if (!(Number.isFinite(keepAliveMs) && keepAliveMs >= 100)) {
    throw new InvalidOptionsError(`sendStreamAsSSE: keepAliveMs must be a number of ms >= 100, got ${String(opts.keepAliveMs)}.`);
  }
  const lastEventId = req.headers['last-event-id'];
  const from = typeof lastEventId === 'string' && /^\d+-\d+$/.test(lastEventId) ? lastEventId : 'start';
  const abort = new AbortController();
  let ended = false;
  const onClose = (): void => {
    if (!ended) abort.abort();
  };
  res.on('close', onClose);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  // One Node timer's reach at most (a longer interval would fire every millisecond).
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), Math.min(keepAliveMs, MAX_TIMER_MS));
  keepAlive.unref();
  try {
    for await (const chunk of queue.readStream(jobId, { from, signal: abort.signal, attempts: opts.attempts })) {
      res.write(`id: ${chunk.id}\nevent: chunk\ndata: ${JSON.stringify({ attempt: chunk.attempt, data: chunk.data })}\n\n`);
    }
  } finally {
    clearInterval(keepAlive);
    res.off('close', onClose);
  }
  if (abort.signal.aborted) {
    if (opts.cancelOnDisconnect) await queue.cancelJob(jobId, 'the client reading its output disconnected');
    return 'disconnected';
  }
  ended = true;
  res.end('event: end\ndata: {}\n\n');
  return 'ended';
}
