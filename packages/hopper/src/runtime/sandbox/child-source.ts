/**
 * The sandbox child's bootstrap, kept as source text so that no file has to be found at run time:
 * the package is built twice (ESM and CommonJS), and neither `import.meta.url` nor `__dirname`
 * works in both. A child process runs it with `node -e CHILD_SOURCE <processorFile>`; a worker
 * thread with `new Worker(CHILD_SOURCE, { eval: true, workerData: { file } })`. Both evaluate it
 * as a CommonJS script, so it uses `require` for built-ins and `import()` for the processor file
 * (which loads ESM and CommonJS files alike).
 *
 * What it does: loads the processor file and reports `ready` (or `load-failed`); then, for each
 * `run`, builds the job object (fields plus `updateProgress`, `log`, `updateData`, `step`, `stream`, which
 * call the parent, see `protocol.ts`), calls the processor with `(job, token, signal)` and
 * reports `done`. A child process also reports uncaught errors (`fatal`, then exit 1) and exits
 * when the parent goes away (its IPC channel closes), so a killed parent leaves no child behind.
 *
 * Plain ES2022 JavaScript, no backticks or `${` (this is a template literal). Tested through the
 * pool in `test/sandbox/`.
 */
export const CHILD_SOURCE = String.raw`'use strict';
const threads = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const inThread = !threads.isMainThread;
const file = inThread ? threads.workerData.file : process.argv[1];

function send(message, callback) {
  if (inThread) {
    threads.parentPort.postMessage(message);
    if (callback) callback();
  } else if (process.connected) {
    process.send(message, callback ? () => callback() : undefined);
  } else if (callback) {
    callback();
  }
}

// Never throws, whatever was thrown (a BigInt, a cycle, a Symbol, getters that throw): the
// parent's job/thrown.ts reads values the same way (JSON, else Node's inspection, else the type).
function readField(value, key) {
  try { const field = value[key]; return field; } catch { return undefined; }
}

function showValue(value) {
  let shown;
  try { shown = JSON.stringify(value); } catch { shown = undefined; }
  if (shown === undefined) {
    try {
      shown = require('node:util').inspect(value, { depth: 2, breakLength: Infinity, getters: false, customInspect: false, showProxy: true });
    } catch { shown = 'a value of type ' + typeof value; }
  }
  return shown.length > 2000 ? shown.slice(0, 2000) + '...' : shown;
}

function isError(value) {
  try { return value instanceof Error; } catch { return false; }
}

function serializeError(value) {
  const message = typeof value === 'object' && value !== null ? readField(value, 'message') : undefined;
  if (typeof message === 'string' || isError(value)) {
    const name = readField(value, 'name');
    const out = {
      name: typeof name === 'string' && name ? name : 'Error',
      message: typeof message === 'string' ? message : "(the error's message could not be read: its getter threw or is not a string)",
    };
    const stack = readField(value, 'stack');
    if (typeof stack === 'string') out.stack = stack;
    const code = readField(value, 'code');
    if (typeof code === 'string' || typeof code === 'number') out.code = code;
    return out;
  }
  return { name: 'Error', message: 'A non-Error value was thrown: ' + showValue(value) };
}

function deserializeError(encoded) {
  const error = new Error(encoded.message);
  error.name = encoded.name;
  if (encoded.stack !== undefined) error.stack = encoded.stack;
  if (encoded.code !== undefined) error.code = encoded.code;
  return error;
}

// Values cross as JSON in both kinds of child, so a processor behaves the same in each.
function deserializeReason(encoded) {
  return typeof encoded.text === 'string' ? encoded.text : deserializeError(encoded);
}

function toJson(value) {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

let processor;
let current;
let nextRequestId = 1;
const pending = new Map();
const stepFunctions = new Map();

function request(runId, method, fields, stepFunction) {
  return new Promise((resolve, reject) => {
    const id = nextRequestId++;
    const message = Object.assign({ type: 'request', runId, id, method }, fields);
    pending.set(id, { resolve, reject });
    if (stepFunction) stepFunctions.set(id, stepFunction);
    send(message);
  });
}

function makeJob(fields, runId) {
  const job = Object.assign({}, fields);
  job.updateProgress = (progress) =>
    new Promise((resolve) => resolve(toJson(progress)))
      .then((value) => request(runId, 'updateProgress', { progress: value }))
      .then(() => { job.progress = progress; });
  job.log = (line) => request(runId, 'log', { line: String(line) });
  job.updateData = (data) =>
    new Promise((resolve) => resolve(toJson(data)))
      .then((value) => request(runId, 'updateData', { data: value }))
      .then(() => { job.data = data; });
  job.step = (key, fn) => {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError('job.step(key, fn): fn must be a function that performs the step, got ' + typeof fn + '.'));
    }
    return request(runId, 'step', { key: String(key) }, fn);
  };
  // The output stream: each write goes to the parent in order, where the job's stream stores it
  // (fenced to the attempt); a string stays text, anything else goes as JSON.
  job.stream = {
    write: (chunk) =>
      new Promise((resolve) => resolve(typeof chunk === 'string' ? chunk : toJson(chunk)))
        .then((value) => request(runId, 'streamWrite', { chunk: value }))
        .then(() => undefined),
    end: () => request(runId, 'streamEnd', {}).then(() => undefined),
  };
  return job;
}

async function run(message) {
  const controller = new AbortController();
  if (message.aborted) controller.abort(deserializeReason(message.aborted));
  current = { runId: message.runId, controller };
  const job = makeJob(message.job, message.runId);
  let reply;
  try {
    const value = await processor(job, message.job.token, controller.signal);
    reply = { type: 'done', runId: message.runId, ok: true, value: toJson(value) };
  } catch (error) {
    reply = { type: 'done', runId: message.runId, ok: false, error: serializeError(error) };
  }
  current = undefined;
  send(reply);
}

function runStep(message) {
  const fn = stepFunctions.get(message.id);
  if (!fn) {
    send({ type: 'step-ran', runId: message.runId, id: message.id, ok: false,
      error: { name: 'Error', message: 'The step of request ' + message.id + ' is unknown to the child (its call already ended).' } });
    return;
  }
  new Promise((resolve) => resolve(fn()))
    .then((value) => ({ type: 'step-ran', runId: message.runId, id: message.id, ok: true, value: toJson(value) }))
    .catch((error) => ({ type: 'step-ran', runId: message.runId, id: message.id, ok: false, error: serializeError(error) }))
    .then((reply) => send(reply));
}

function onMessage(message) {
  switch (message.type) {
    case 'run':
      void run(message);
      return;
    case 'abort':
      if (current && current.runId === message.runId) current.controller.abort(deserializeReason(message.reason));
      return;
    case 'reply': {
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      stepFunctions.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(deserializeError(message.error));
      return;
    }
    case 'step-run':
      runStep(message);
      return;
  }
}

if (inThread) {
  // A worker thread's uncaught errors reach the parent through the Worker's 'error' event.
  threads.parentPort.on('message', onMessage);
} else {
  process.title = 'hopper-sandbox';
  process.on('message', onMessage);
  process.on('disconnect', () => process.exit(0));
  let dying = false;
  process.on('uncaughtException', (error) => {
    if (dying) return;
    dying = true;
    try { console.error(error); } catch {}
    // Exit once the report is sent, or after a second if the channel is stuck.
    setTimeout(() => process.exit(1), 1000).unref();
    send({ type: 'fatal', error: serializeError(error) }, () => process.exit(1));
  });
}

function pickProcessor(namespace) {
  const main = namespace.default;
  if (typeof main === 'function') return main;
  // A CommonJS file compiled from TypeScript sets exports.default.
  if (main && typeof main.default === 'function') return main.default;
  return undefined;
}

import(pathToFileURL(file).href).then(
  (namespace) => {
    const fn = pickProcessor(namespace);
    if (!fn) {
      const found = namespace.default === undefined ? 'no default export' : 'a default export of type ' + typeof namespace.default;
      throw new TypeError('The processor file ' + file + ' loaded but exports no processor function (found ' + found +
        '). Export it as "export default async (job, token, signal) => { ... }" (ESM) or "module.exports = async (job) => { ... }" (CommonJS).');
    }
    processor = fn;
    send({ type: 'ready' });
  },
).catch((error) => send({ type: 'load-failed', error: serializeError(error) }));
`;
