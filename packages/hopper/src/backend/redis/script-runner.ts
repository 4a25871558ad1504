/**
 * Runs the generated Lua scripts by name: named KEYS and ARGV are mapped to positions in one
 * place, and scripts are called with EVALSHA, falling back to EVAL when the server does not have
 * them cached yet (NOSCRIPT), which also caches them.
 */
import type { ScriptDef } from './scripts.generated.js';
import type { RedisClient } from './connection.js';
import { ScriptError } from '../../job/errors.js';

type Arg = string | number;

/** Names of a script's keys. */
export type KeysOf<S extends ScriptDef> = Record<S['keys'][number], string>;
/** Names of a script's arguments. */
export type ArgsOf<S extends ScriptDef> = Record<S['args'][number], Arg>;

/**
 * Calls `script` with named keys and args (and its trailing values in `rest`).
 * Returns the raw reply, which the caller parses.
 */
export async function runScript<S extends ScriptDef>(
  client: RedisClient,
  script: S,
  keys: KeysOf<S>,
  args: ArgsOf<S>,
  rest?: readonly Arg[],
): Promise<unknown> {
  const params: Arg[] = [script.sha, script.keys.length];
  const namedKeys = keys as Record<string, string>;
  const namedArgs = args as Record<string, Arg>;
  for (const name of script.keys) params.push(namedKeys[name]);
  for (const name of script.args) params.push(namedArgs[name]);
  if (rest) for (const value of rest) params.push(value);
  try {
    try {
      return await client.call('EVALSHA', params);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      params[0] = script.source;
      return await client.call('EVAL', params);
    }
  } catch (err) {
    throw asScriptError(script.name, err);
  }
}

/** Redis's reply when a script itself failed (Redis 7: `user_script:<line>`; older: "Error running script"). */
const SCRIPT_FAILURE = /user_script|Error running script/;

/** A script that failed inside Redis becomes a typed ScriptError; connection and other errors pass through. */
function asScriptError(name: string, err: unknown): unknown {
  if (!(err instanceof Error) || !SCRIPT_FAILURE.test(err.message)) return err;
  return new ScriptError(`Script ${name} failed in Redis: ${err.message}`, { cause: err });
}
