// Simulated services for the demo: an OCR vendor, an NLP classifier, marketplaces, a mailer and
// a streaming language model. No network: each waits a little and answers (or fails) like the
// real thing would. The waits end early when the job's signal aborts.

/** Waits `ms` (a little more or less), rejecting when `signal` aborts. */
export function work(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      ms * (0.7 + Math.random() * 0.6),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The OCR vendor: 80 ms a page; one call in four fails with a transient 503 (retried with backoff). */
export async function ocrExtract(invoice, signal) {
  await work(80, signal);
  if (Math.random() < 0.25) throw new Error('OCR vendor: 503 Service Unavailable (transient)');
  return { text: `INVOICE ${invoice.invoiceId} TOTAL ${invoice.amount} EUR`, pages: 1 };
}

/** The NLP classifier: reads the OCR text, finds the supplier and the total. */
export async function nlpClassify(text, signal) {
  await work(60, signal);
  const total = Number(/TOTAL (-?[\d.]+)/.exec(text)?.[1]);
  return { category: total > 1000 ? 'capex' : 'opex', total, lines: 1 + Math.floor(Math.random() * 5) };
}

/** A marketplace's stock API: 30 ms a call; `down` ones answer 503. */
export async function pushStock(marketplace, sku, signal) {
  await work(30, signal);
  if (marketplace.down) throw new Error(`${marketplace.name}: HTTP 503 from the stock API`);
  return { sku, accepted: true };
}

/** The mailer: 40 ms per batch of recipients. */
export async function sendBatch(recipients, signal) {
  await work(40, signal);
  return { sent: recipients };
}

/** A streaming language model: yields ~20 tokens, one every 40 ms; stops when the signal aborts. */
export async function* streamModel(prompt, turn, signal) {
  const words = `Turn ${turn} on "${prompt}": thinking about it step by step, here is a little more of the answer, token by token.`.split(
    ' ',
  );
  for (const word of words) {
    await work(40, signal);
    yield `${word} `;
  }
}
