/**
 * Vitest global setup for the Redis Cluster tier: starts a local 3-master cluster
 * (`redis-server --cluster-enabled yes` on free ports, joined with `redis-cli --cluster create`)
 * and gives the tests its nodes. Takes a few seconds; torn down after the run.
 */
import 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    clusterNodes: { host: string; port: number }[];
  }
}

const run = promisify(execFile);
let nodes: RedisServerHandle[] = [];

export async function setup(project: TestProject): Promise<void> {
  nodes = await Promise.all([0, 1, 2].map(() => startRedisServer(['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'])));
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
  for (let i = 0; i < 100; i++) {
    const states = await Promise.all(nodes.map((n) => run('redis-cli', ['-p', String(n.port), 'cluster', 'info']).then((r) => r.stdout)));
    if (states.every((s) => s.includes('cluster_state:ok'))) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  project.provide(
    'clusterNodes',
    nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
  );
}

export async function teardown(): Promise<void> {
  await Promise.all(nodes.map((n) => n.stop()));
}
