// Parent side of the child processes: forking runners, the ready/start barrier, timeouts, and
// making sure no child outlives a run or the harness.
//
// Each run gets fresh processes so that no library state, JIT warm-up, heap growth or leaked
// timer carries from one run (or one library) into the next.

import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const RUNNER = fileURLToPath(new URL('./runner.mjs', import.meta.url));

/**
 * A message from a runner (the protocol is described in runner.mjs).
 * @typedef {{ type: 'ready' }
 *   | { type: 'result', metrics: Record<string, number>, notes: string[], data?: unknown }
 *   | { type: 'error', message: string, stack?: string }
 *   | { type: 'probe', name: string, version: string }} RunnerMessage
 */

/** Every child not yet exited, so that any exit path of the harness can kill them. */
const live = new Set();

/** Kills every child still running (synchronous: usable from process.on('exit')). */
export function killAllChildren() {
  for (const child of live) child.kill('SIGKILL');
}

function forkRunner(spec, execArgv) {
  const child = fork(RUNNER, [JSON.stringify(spec)], { execArgv, stdio: 'inherit' });
  live.add(child);
  // 'close' rather than 'exit': it waits for the IPC channel to close too, so every message
  // the child sent has been received by then (after 'exit' a result can still be in flight).
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, exited };
}

/**
 * Loads library `lib` in a child process and returns its name and version, or throws the
 * adapter's own explanation (for Hopper: that it is not built yet).
 */
export async function probeLibrary(lib) {
  const { child, exited } = forkRunner({ mode: 'probe', lib }, []);
  /** @type {RunnerMessage | undefined} */
  let reply;
  child.on('message', (/** @type {RunnerMessage} */ message) => (reply ??= message));
  const { code, signal } = await exited;
  if (reply?.type === 'probe') return { name: reply.name, version: reply.version };
  if (reply?.type === 'error') throw new Error(reply.message);
  throw new Error(`loading ${lib} in a child process failed (exit code ${code}, signal ${signal})`);
}

/**
 * Runs the roles of one step, each in its own process, and resolves with their results once
 * every process has exited. Roles start together: `start` is sent only when all are ready.
 * On any failure or on timeout, every process of the step is killed before rejecting.
 * @param {{ role: string }[]} specs one runner spec per role
 * @param {{ timeoutMs: number, execArgvFor: (role: string) => string[] }} options
 * `setupMs` is the time from fork to ready: slow setups (a missed wake-up during warm-up, say)
 * are worth seeing even though they are not part of any figure.
 * @returns {Promise<{ role: string, metrics: Record<string, number>, notes: string[], data?: unknown, setupMs: number }[]>}
 */
export function runStep(specs, { timeoutMs, execArgvFor }) {
  return new Promise((resolve, reject) => {
    const states = specs.map((spec) => ({
      role: spec.role,
      ...forkRunner(spec, execArgvFor(spec.role)),
      forkedAt: performance.now(),
      setupMs: 0,
      ready: false,
      result: undefined,
      closed: false,
    }));
    let started = false;
    let settled = false;

    const abort = async (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const state of states) state.child.kill('SIGKILL');
      await Promise.all(states.map((state) => state.exited));
      reject(error);
    };
    const timer = setTimeout(
      () => abort(new Error(`timed out after ${timeoutMs / 1000} s (roles: ${specs.map((s) => s.role).join(', ')})`)),
      timeoutMs,
    );

    for (const state of states) {
      state.child.on('message', (/** @type {RunnerMessage} */ message) => {
        if (settled) return;
        if (message?.type === 'ready') {
          state.ready = true;
          state.setupMs = performance.now() - state.forkedAt;
          if (!started && states.every((s) => s.ready)) {
            started = true;
            for (const s of states) s.child.send({ type: 'start' });
          }
        } else if (message?.type === 'result') {
          if (!state.ready) {
            void abort(new Error(`role ${state.role} returned without calling ctx.ready()`));
          } else {
            const { metrics, notes, data } = message;
            state.result = { role: state.role, metrics, notes, data, setupMs: state.setupMs };
          }
        } else if (message?.type === 'error') {
          void abort(new Error(`${state.role} process failed: ${message.stack ?? message.message}`));
        }
      });
      state.child.on('error', (error) => void abort(new Error(`${state.role} process: ${error.message}`)));
      void state.exited.then(async ({ code, signal }) => {
        state.closed = true;
        if (settled) return;
        if (!state.result) {
          await abort(new Error(`${state.role} process exited (code ${code}, signal ${signal}) without a result`));
        } else if (states.every((s) => s.result && s.closed)) {
          settled = true;
          clearTimeout(timer);
          resolve(states.map((s) => s.result));
        }
      });
    }
  });
}
