// A minimal RESP2 client for the harness's own control commands (PING, FLUSHALL, INFO).
//
// Why not ioredis: the bench workspace must not depend on anything the libraries under test
// bring in (their connection code is part of what is measured), and a handful of
// request/response commands need no pipelining, reconnection or cluster support.

import net from 'node:net';

/**
 * A reply from Redis: simple string, integer, bulk string (null when absent) or array.
 * (Array items are replies too; JSDoc cannot declare the recursive type.)
 * @typedef {string | number | null | unknown[]} RedisReply
 */

/** An error reply from Redis (`-ERR ...`), kept distinct from connection failures. */
export class RedisReplyError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RedisReplyError';
  }
}

const CRLF = '\r\n';

/** Encodes a command as a RESP array of bulk strings. */
function encode(args) {
  let out = `*${args.length}${CRLF}`;
  for (const arg of args) {
    const text = String(arg);
    out += `$${Buffer.byteLength(text)}${CRLF}${text}${CRLF}`;
  }
  return out;
}

/**
 * Parses one reply starting at `offset`.
 * Returns `undefined` when the buffer does not yet hold a whole reply.
 * @returns {{ value: RedisReply | RedisReplyError, next: number } | undefined}
 */
function parse(buffer, offset) {
  const lineEnd = buffer.indexOf(CRLF, offset);
  if (lineEnd === -1) return undefined;
  const type = String.fromCharCode(buffer[offset]);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const afterLine = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, next: afterLine };
    case '-':
      return { value: new RedisReplyError(line), next: afterLine };
    case ':':
      return { value: Number(line), next: afterLine };
    case '$': {
      const length = Number(line);
      if (length === -1) return { value: null, next: afterLine };
      if (buffer.length < afterLine + length + 2) return undefined;
      return {
        value: buffer.toString('utf8', afterLine, afterLine + length),
        next: afterLine + length + 2,
      };
    }
    case '*': {
      const count = Number(line);
      if (count === -1) return { value: null, next: afterLine };
      const items = [];
      let next = afterLine;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, next);
        if (item === undefined) return undefined;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`unexpected RESP reply type ${JSON.stringify(type)} from Redis`);
  }
}

/**
 * Connects to Redis and returns a client that sends one command at a time in order.
 * @param {{ host: string, port: number }} address
 */
export function connectRedis({ host, port }) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ host, port });
    /** @type {{ resolve: (value: RedisReply) => void, reject: (error: Error) => void }[]} */
    const pending = [];
    let buffered = Buffer.alloc(0);
    let failure;

    const failAll = (error) => {
      failure ??= error;
      for (const waiter of pending.splice(0)) waiter.reject(failure);
    };

    socket.on('data', (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      let offset = 0;
      for (;;) {
        let reply;
        try {
          reply = offset < buffered.length ? parse(buffered, offset) : undefined;
        } catch (error) {
          failAll(error);
          socket.destroy();
          return;
        }
        if (reply === undefined) break;
        offset = reply.next;
        const waiter = pending.shift();
        if (waiter === undefined) continue;
        if (reply.value instanceof RedisReplyError) waiter.reject(reply.value);
        else waiter.resolve(reply.value);
      }
      buffered = buffered.subarray(offset);
    });
    socket.on('error', (error) => {
      failAll(new Error(`Redis control connection to ${host}:${port} failed: ${error.message}`));
      reject(failure);
    });
    socket.on('close', () => failAll(new Error(`Redis control connection to ${host}:${port} closed`)));
    socket.on('connect', () => {
      resolve({
        /** Sends a command and resolves with its reply; rejects with RedisReplyError on `-ERR`. */
        command(...args) {
          if (failure) return Promise.reject(failure);
          return new Promise((resolveReply, rejectReply) => {
            pending.push({ resolve: resolveReply, reject: rejectReply });
            socket.write(encode(args));
          });
        },
        /** Closes the connection without waiting for replies still in flight. */
        close() {
          socket.destroy();
        },
      });
    });
  });
}

/**
 * Parses an INFO reply into a map of field -> value (strings; numbers are left to the caller).
 * @param {string} text
 */
export function parseInfo(text) {
  /** @type {Map<string, string>} */
  const fields = new Map();
  for (const line of text.split(CRLF)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/**
 * Reads INFO `section` and returns the named fields as numbers, failing loudly if one is
 * missing (a Redis version that renamed a field must not silently yield NaN figures).
 * @param {{ command: (...args: (string | number)[]) => Promise<RedisReply> }} client
 * @param {string} section
 * @param {string[]} names
 */
export async function readInfoNumbers(client, section, names) {
  const fields = parseInfo(String(await client.command('INFO', section)));
  /** @type {Record<string, number>} */
  const values = {};
  for (const name of names) {
    const raw = fields.get(name);
    const value = Number(raw);
    if (raw === undefined || !Number.isFinite(value)) {
      throw new Error(`Redis INFO ${section} has no numeric field "${name}" (got ${JSON.stringify(raw)})`);
    }
    values[name] = value;
  }
  return values;
}
