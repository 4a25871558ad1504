/**
 * Runs the backend's operations by name: named KEYS and ARGV are mapped to positions in one
 * place, and each operation is called as a function of Hopper's Redis Functions library (FCALL).
 *
 * The library is loaded when a call finds its function missing: on the first call to a server,
 * and again after a restart without persistence, a `FUNCTION FLUSH` or a failover to a node
 * without it. That error means the call did not run, so it is loaded and the call sent once more
 * (never twice: a second "not found" is an error). Where `FUNCTION` or `FCALL` is denied (a
 * managed Redis that renames or forbids them, an ACL user without them) or unknown, the client
 * falls back for good to the standalone scripts with EVALSHA (and EVAL on NOSCRIPT). Where the load
 * is refused because Redis is full (maxmemory), the client uses the standalone scripts for
 * LIBRARY_RETRY_AFTER_OOM_MS, then tries the library again.
 * See docs/architecture.md, The Lua layer.
 */
import type { Cluster } from 'ioredis';
import { LIBRARY, type ScriptDef } from './scripts.generated.js';
import { isClusterClient, type RedisClient } from './connection.js';
import { LibraryConflictError, ScriptError } from '../../job/errors.js';

type Arg = string | number;

/** Names of a script's keys. */
export type KeysOf<S extends ScriptDef> = Record<S['keys'][number], string>;
/** Names of a script's arguments. */
export type ArgsOf<S extends ScriptDef> = Record<S['args'][number], Arg>;

/** How a client runs the operations: library functions, or standalone scripts (FUNCTION denied). */
export type ScriptMode = 'function' | 'eval';

interface ClientScripts {
  mode: ScriptMode;
  /** The library load under way (calls that found their function missing share it). */
  loading: Promise<ScriptMode> | undefined;
  /**
   * Set when the library could not be loaded because Redis is full (maxmemory): the client runs
   * the standalone scripts until then (ms since the epoch), and tries the library again after.
   */
  retryLibraryAt: number | undefined;
}

/** How long a client full of memory runs the standalone scripts before trying to load the library again. */
export const LIBRARY_RETRY_AFTER_OOM_MS = 5_000;

const clients = new WeakMap<RedisClient, ClientScripts>();

function stateOf(client: RedisClient): ClientScripts {
  let state = clients.get(client);
  if (!state) {
    state = { mode: 'function', loading: undefined, retryLibraryAt: undefined };
    clients.set(client, state);
  }
  return state;
}

/** How `client` runs operations now ('function' until a call learned FUNCTION is denied). */
export function scriptMode(client: RedisClient): ScriptMode {
  return stateOf(client).mode;
}

/**
 * Calls `script` with named keys and args (and its trailing values in `rest`).
 * Returns the raw reply, which the caller parses.
 */
export function runScript<S extends ScriptDef>(
  client: RedisClient,
  script: S,
  keys: KeysOf<S>,
  args: ArgsOf<S>,
  rest?: readonly Arg[],
): Promise<unknown> {
  return run(client, script, keys, args, rest, callStrings);
}

/**
 * As runScript, but the reply's bulk strings stay the Buffers the parser made (numbers and nulls
 * are as in runScript): ioredis does not copy the whole reply into strings, array by array. For
 * the replies decoded field by field on the hot path (claim, complete, fail: see replies.ts).
 */
export function runScriptRaw<S extends ScriptDef>(
  client: RedisClient,
  script: S,
  keys: KeysOf<S>,
  args: ArgsOf<S>,
  rest?: readonly Arg[],
): Promise<unknown> {
  return run(client, script, keys, args, rest, callBuffers);
}

/** How a command is sent: replies as strings, or as Buffers. */
type Send = (client: RedisClient, command: string, params: Arg[]) => Promise<unknown>;
const callStrings: Send = (client, command, params) => client.call(command, params);
const callBuffers: Send = (client, command, params) => client.callBuffer(command, params);

async function run<S extends ScriptDef>(
  client: RedisClient,
  script: S,
  keys: KeysOf<S>,
  args: ArgsOf<S>,
  rest: readonly Arg[] | undefined,
  send: Send,
): Promise<unknown> {
  // Sized once and filled by index: a batch's call has hundreds of values, and growing the array
  // push by push copies it several times.
  const nKeys = script.keys.length;
  const nArgs = script.args.length;
  const params = new Array<Arg>(2 + nKeys + nArgs + (rest ? rest.length : 0));
  params[0] = script.fn;
  params[1] = nKeys;
  const namedKeys = keys as Record<string, string>;
  const namedArgs = args as Record<string, Arg>;
  let at = 2;
  for (let i = 0; i < nKeys; i++) params[at++] = namedKeys[script.keys[i]];
  for (let i = 0; i < nArgs; i++) params[at++] = namedArgs[script.args[i]];
  if (rest) for (let i = 0; i < rest.length; i++) params[at++] = rest[i];
  const state = stateOf(client);
  if (state.retryLibraryAt !== undefined && Date.now() >= state.retryLibraryAt) {
    state.retryLibraryAt = undefined;
    state.mode = 'function';
  }
  try {
    if (state.mode === 'function') {
      try {
        return await send(client, 'FCALL', params);
      } catch (err) {
        // Any other error: the function ran (and failed), or the reply was lost: never send it again.
        if (isDenied(err, 'fcall')) state.mode = 'eval';
        else if (!isFunctionMissing(err)) throw err;
        // The function did not run: load the library (or learn FUNCTION is denied) and call once more.
        else if ((await loadLibrary(client, state)) === 'function') return await callAgain(client, script, params, send);
      }
    }
    return await runEval(client, script, params, send);
  } catch (err) {
    throw asScriptError(script, err);
  }
}

/**
 * The second FCALL, after the library was loaded (or found loaded). Still "not found": the library
 * of that name on the server is not Hopper's (it has other functions), and loading ours was
 * refused as "already exists": a typed error that says what to do. Nothing is cached, so once the
 * other library is deleted the next call loads Hopper's and works.
 */
async function callAgain(client: RedisClient, script: ScriptDef, params: Arg[], send: Send): Promise<unknown> {
  try {
    return await send(client, 'FCALL', params);
  } catch (err) {
    if (!isFunctionMissing(err)) throw err;
    throw new LibraryConflictError(
      `Redis has a function library named "${LIBRARY.name}" that is not Hopper's: it lacks ${script.fn} (FCALL answered "${(err as Error).message}"), ` +
        `and Hopper cannot load its own under that name. Delete it (redis-cli FUNCTION DELETE ${LIBRARY.name}); ` +
        'Hopper then loads its library at the next call, and its components recover by themselves.',
      { cause: err },
    );
  }
}

async function runEval(client: RedisClient, script: ScriptDef, params: Arg[], send: Send): Promise<unknown> {
  const evalParams = params.slice();
  evalParams[0] = script.sha;
  try {
    return await send(client, 'EVALSHA', evalParams);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    evalParams[0] = script.source;
    return await send(client, 'EVAL', evalParams);
  }
}

/**
 * Loads the library on the client's server (every master of a cluster), once however many calls
 * ask at the same time. Returns 'eval' (and remembers it) when FUNCTION or FCALL is denied.
 */
function loadLibrary(client: RedisClient, state: ClientScripts): Promise<ScriptMode> {
  state.loading ??= (async () => {
    try {
      const nodes = isClusterClient(client) ? (client as Cluster).nodes('master') : [client];
      // Without REPLACE: the name carries the source's hash, so a library of that name is this one
      // (another process loaded it first), and a live library is never swapped under other clients.
      await Promise.all(
        nodes.map((node) =>
          node.call('FUNCTION', ['LOAD', LIBRARY.source]).catch((err: unknown) => {
            if (!(err instanceof Error) || !/already exists/.test(err.message)) throw err;
          }),
        ),
      );
      return 'function' as const;
    } catch (err) {
      if (isOutOfMemory(err)) {
        // FUNCTION LOAD is refused while Redis is full: the operations that must go on then (claim,
        // complete, fail, lock renewal, and those that free memory: their scripts allow OOM) run
        // as standalone scripts meanwhile, and the others are refused by Redis as they would be
        // as functions. Without this, a library missing from a full Redis (a new Hopper version
        // deployed, FUNCTION FLUSH) would stop the workers that could drain it.
        state.mode = 'eval';
        state.retryLibraryAt = Date.now() + LIBRARY_RETRY_AFTER_OOM_MS;
        return 'eval' as const;
      }
      if (!isDenied(err, 'function')) throw err;
      state.mode = 'eval';
      return 'eval' as const;
    } finally {
      state.loading = undefined;
    }
  })();
  return state.loading;
}

/** Redis's refusal of a command that may grow memory while it is full under maxmemory (noeviction). */
function isOutOfMemory(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('OOM ');
}

/** Redis's reply to FCALL of a function it does not have (the library is not loaded). */
function isFunctionMissing(err: unknown): boolean {
  return err instanceof Error && /^ERR Function not found/.test(err.message);
}

/** The command is denied (ACL), renamed away (unknown) or unsupported on this server. */
function isDenied(err: unknown, command: 'fcall' | 'function'): boolean {
  if (!(err instanceof Error)) return false;
  const message = err.message.toLowerCase();
  if (message.startsWith('noperm')) return true;
  return message.startsWith(`err unknown command '${command}'`) || message.startsWith(`err unknown command \`${command}\``);
}

/**
 * Redis's reply when a script itself failed: Redis 7 names the chunk `user_function` (library)
 * or `user_script` (EVAL); older: "Error running script".
 */
const SCRIPT_FAILURE = /user_function|user_script|Error running script/;

/** A script that failed inside Redis becomes a typed ScriptError; connection and other errors pass through. */
function asScriptError(script: ScriptDef, err: unknown): unknown {
  if (!(err instanceof Error) || !SCRIPT_FAILURE.test(err.message)) return err;
  return new ScriptError(`Script ${script.name} failed in Redis: ${withSourceLines(err.message)}`, { cause: err });
}

/**
 * Adds the source file and line to each library line number in a Redis error message:
 * `user_function:812:` becomes `user_function:812 (complete.lua:40):`.
 */
export function withSourceLines(message: string): string {
  return message.replace(/user_function:(\d+)/g, (match: string, line: string) => {
    const at = sourceLine(Number(line));
    return at ? `${match} (${at})` : match;
  });
}

/** The source file and line (`complete.lua:40`) of a line of the library, if it comes from one. */
export function sourceLine(libraryLine: number): string | undefined {
  const map = LIBRARY.lineMap;
  let lo = 0;
  let hi = map.length - 1;
  if (hi < 0 || libraryLine < map[0][0]) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (map[mid][0] <= libraryLine) lo = mid;
    else hi = mid - 1;
  }
  const [start, file, line] = map[lo];
  if (line === 0) return undefined;
  return `${LIBRARY.files[file]}:${line + libraryLine - start}`;
}
