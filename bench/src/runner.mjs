// Entry point of every child process the harness forks: runs one role of one scenario against
// one library, or (probe mode) only loads a library and reports its version.
//
// Protocol (IPC messages):
//   child -> parent  { type: 'ready' }                  setup done, waiting for the go
//   parent -> child  { type: 'start' }                  every process of the step is ready
//   child -> parent  { type: 'result', metrics, notes } the role finished
//   child -> parent  { type: 'error', message, stack }  the role (or the library) failed
//   child -> parent  { type: 'probe', name, version }   probe mode only

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

/** Closes what the role opened, newest first (workers before the queues they use). */
async function closeAll(resources) {
  for (const resource of resources.reverse()) {
    let timer;
    const timeout = new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)));
    await Promise.race([Promise.resolve(resource.close()).catch(() => {}), timeout]);
    clearTimeout(timer);
  }
}

async function runRole(spec, lib) {
  const { default: scenario } = await import(`./scenarios/${spec.scenario}.mjs`);
  const role = scenario.roles[spec.role];
  if (typeof role !== 'function') throw new Error(`scenario ${spec.scenario} has no role "${spec.role}"`);

  /** @type {{ close: () => unknown }[]} */
  const resources = [];
  let started;
  const ctx = {
    lib,
    params: spec.params,
    queueName: spec.queueName,
    connection: spec.connection,
    redisPid: spec.redisPid,
    clockTicks: spec.clockTicks,
    /** Registers something with a close() method to be closed after the role returns. */
    open(resource) {
      resources.push(resource);
      return resource;
    },
    /** A control connection to Redis for INFO, outside the library under test. */
    async redis() {
      const client = await connectRedis(spec.connection);
      resources.push(client);
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
  await closeAll(resources);
  return {
    metrics: result.metrics ?? {},
    notes: (result.notes ?? []).filter((note) => typeof note === 'string'),
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
