/**
 * A job's public key, as BullMQ spells it: `<prefix>:<queue>:<id>` (a parent's `parentKey`, the
 * keys of `getChildrenValues` and `getDependencies`). Queue names cannot contain ':', so the key
 * splits back unambiguously once the prefix is known; ids may contain ':'.
 */

/** The public key of job `id` of queue `queue` under `prefix`. */
export function publicJobKey(prefix: string, queue: string, id: string): string {
  return `${prefix}:${queue}:${id}`;
}

/** The queue and id a public key names, or undefined if it is not under `prefix`. */
export function parseJobKey(prefix: string, key: string): { queue: string; id: string } | undefined {
  if (!key.startsWith(`${prefix}:`)) return undefined;
  const rest = key.slice(prefix.length + 1);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { queue: rest.slice(0, colon), id: rest.slice(colon + 1) };
}

/**
 * The queue name in a qualified queue name (`<prefix>:<queue>`, BullMQ's `parent.queue`), or
 * undefined if it is not under `prefix`. A bare queue name is accepted too.
 */
export function queueOfQualifiedName(prefix: string, qualified: string): string | undefined {
  if (qualified.startsWith(`${prefix}:`)) return qualified.slice(prefix.length + 1);
  return qualified.includes(':') ? undefined : qualified;
}

/** The queue and id of a job's `opts.parent` ({ id, queue: qualified name }); undefined if it names another prefix. */
export function parentFromOpts(prefix: string, parent: { id: string; queue: string }): { queue: string; id: string } | undefined {
  const queue = queueOfQualifiedName(prefix, parent.queue);
  return queue === undefined ? undefined : { queue, id: parent.id };
}
