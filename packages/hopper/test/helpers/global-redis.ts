/**
 * Vitest global setup: gives every test file a Redis URL.
 *
 * REDIS_URL wins when set. Otherwise a throwaway `redis-server` is started on a free port with
 * persistence off, and stopped after the run. Without either, the run fails with instructions.
 */
import 'vitest';
import type { TestProject } from 'vitest/node';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let server: RedisServerHandle | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.REDIS_URL;
  if (!url) {
    server = await startRedisServer();
    url = server.url;
  }
  project.provide('redisUrl', url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
