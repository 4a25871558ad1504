// Entry point of every child process the harness forks: runs one role of one scenario against
// one library, or (probe mode) only loads a library and reports its version.
//
// Protocol (IPC messages):
//   child -> parent  { type: 'ready' }                        setup done, waiting for the go
//   parent -> child  { type: 'start' }                        every process of the step is ready
//   child -> parent  { type: 'result', metrics, notes, data } the role finished (data: optional,
//                                                             JSON for the scenario's `combine`)
//   child -> parent  { type: 'error', message, stack }        the role (or the library) failed
//   child -> parent  { type: 'probe', name, version }         probe mode only

import { performance } from 'node:perf_hooks';
import { connectRedis, readInfoNumbers } from './redis/client.mjs';

/** How long the library may take to close its connections before the child exits anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

// If the harness dies, the IPC channel closes: never outlive it.
process.on('disconnect', () => process.exit(2));

/** Sends a message and waits until it has been handed to the channel (so exit cannot drop it). */
const send = (message) =>
  new Promise((resolve) => {
    if (!process.connected) resolve(undefined);
    else process.send(message, () => resolve(undefined));
  });

const fail = async (error) => {
  const message = error instanceof Error ? error.message : String(error);
  await send({ type: 'error', message, stack: error instanceof Error ? error.stack : undefined });
  process.exit(1);
};
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

/** A close() slower than this is reported: it usually means a blocking call is not interrupted. */
const SLOW_CLOSE_MS = 1_000;

/**
 * Closes what the role opened, newest first (workers before the queues they use), and returns
 * notes on any close() that failed, hung or was slow: not part of a figure, but worth seeing.
 * @param {{ resource: { close: () => unknown }, label: string }[]} opened
 */
async function closeAll(opened) {
  const notes = [];
  for (const { resource, label } of opened.reverse()) {
    const started = performance.now();
    let timer;
    const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS)));
    const closing = Promise.resolve()
      .then(() => resource.close())
      .then(
        () => 'closed',
        (error) => `failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    const outcome = await Promise.race([closing, timeout]);
    clearTimeout(timer);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (outcome === 'timeout') notes.push(`${label}.close() had not finished after ${CLOSE_TIMEOUT_MS / 1000} s`);
    else if (outcome !== 'closed') notes.push(`${label}.close() ${outcome}`);
    else if (performance.now() - started > SLOW_CLOSE_MS) notes.push(`${label}.close() took ${seconds} s`);
  }
  return notes;
}

async function runRole(spec, lib) {
  const { default: scenario } = await import(`./scenarios/${spec.scenario}.mjs`);
  const role = scenario.roles[spec.role];
  if (typeof role !== 'function') throw new Error(`scenario ${spec.scenario} has no role "${spec.role}"`);

  /** @type {{ resource: { close: () => unknown }, label: string }[]} */
  const opened = [];
  /** Notes by text, with how often each was made (a reconnect loop repeats the same error). */
  const noted = new Map();
  const note = (text) => noted.set(text, (noted.get(text) ?? 0) + 1);
  let started;
  const ctx = {
    lib,
    params: spec.params,
    queueName: spec.queueName,
    connection: spec.connection,
    redisPid: spec.redisPid,
    clockTicks: spec.clockTicks,
    /**
     * Registers something with a close() method to be closed after the role returns. An emitter's
     * 'error' events become notes: unheard, they would crash the process (even during close()),
     * and a role that must fail on them listens itself (see trackCompletions).
     */
    open(resource, label = resource.constructor.name) {
      opened.push({ resource, label });
      if (typeof resource.on === 'function') {
        resource.on('error', (error) => note(`${label} emitted error: ${error instanceof Error ? error.message : String(error)}`));
      }
      return resource;
    },
    /** A control connection to Redis for INFO, outside the library under test. */
    async redis() {
      const client = await connectRedis(spec.connection);
      ctx.open(client, 'Redis control connection');
      return { info: (section, names) => readInfoNumbers(client, section, names) };
    },
    /** Declares setup done; resolves when the parent says every process of the step is ready. */
    ready() {
      started ??= new Promise((resolve) => {
        process.on('message', (/** @type {{ type?: string }} */ message) => message?.type === 'start' && resolve(undefined));
        void send({ type: 'ready' });
      });
      return started;
    },
  };

  const result = (await role(ctx)) ?? {};
  for (const text of result.notes ?? []) if (typeof text === 'string') note(text);
  for (const text of await closeAll(opened)) note(text);
  return {
    metrics: result.metrics ?? {},
    notes: [...noted].map(([text, times]) => (times > 1 ? `${text} (${times} times)` : text)),
    data: result.data,
  };
}

try {
  const spec = JSON.parse(process.argv[2] ?? '');
  const lib = await import(`./libs/${spec.lib}.mjs`);
  if (spec.mode === 'probe') {
    await send({ type: 'probe', name: lib.name, version: lib.version });
  } else {
    await send({ type: 'result', ...(await runRole(spec, lib)) });
  }
  process.exit(0);
} catch (error) {
  await fail(error);
}
