/**
 * Drops every client connection of a Redis server but the caller's (CLIENT KILL TYPE normal), as
 * a network blip would: the clients reconnect and ioredis re-sends what had no reply yet.
 */
import { Redis } from 'ioredis';

export async function dropClientConnections(url: string): Promise<number> {
  const admin = new Redis(url);
  try {
    return Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
  } finally {
    admin.disconnect();
  }
}

/** Empties the logical database `url` names (`redis://host:port/<db>`): for tests that own a whole database. */
export async function flushDatabase(url: string): Promise<void> {
  const admin = new Redis(url);
  try {
    await admin.flushdb();
  } finally {
    admin.disconnect();
  }
}
