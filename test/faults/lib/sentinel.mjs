// A Sentinel deployment for the Sentinel rows: one primary, two replicas and three sentinels on
// loopback ports (lib/redis.mjs ranges), quorum 2, a primary considered down after 2 s.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisProc, SENTINEL_PORTS, SENTINEL_REDIS_PORTS, freeSuitePort, releaseSuitePort, waitForPing } from './redis.mjs';
import { admin, info, until } from './admin.mjs';
import { sentinelCommand } from './tools.mjs';

export const MASTER_NAME = 'faults';

class SentinelProc {
  constructor(primaryPort, downAfterMs) {
    this.primaryPort = primaryPort;
    this.downAfterMs = downAfterMs;
    this.dir = mkdtempSync(join(tmpdir(), 'hopper-faults-sentinel-'));
  }

  async start() {
    this.port = await freeSuitePort(SENTINEL_PORTS);
    const conf = join(this.dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${this.port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${this.primaryPort} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} ${this.downAfterMs}`,
        `sentinel failover-timeout ${MASTER_NAME} 10000`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    const [cmd, ...flags] = sentinelCommand();
    this.child = spawn(cmd, [conf, ...flags], { stdio: ['ignore', 'ignore', 'inherit'] });
    await waitForPing(this.port);
  }

  async stop() {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
    releaseSuitePort(this.port);
  }
}

export class SentinelSet {
  constructor({ downAfterMs = 2_000 } = {}) {
    this.downAfterMs = downAfterMs;
    this.servers = [];
    this.sentinels = [];
  }

  async start() {
    const primary = new RedisProc({ ports: SENTINEL_REDIS_PORTS });
    await primary.start();
    this.servers.push(primary);
    for (let i = 0; i < 2; i++) {
      const replica = new RedisProc({ ports: SENTINEL_REDIS_PORTS, extra: ['--replicaof', '127.0.0.1', String(primary.port)] });
      await replica.start();
      this.servers.push(replica);
    }
    for (const replica of this.servers.slice(1)) {
      await until(
        async () => (await info(replica.port, 'replication')).master_link_status === 'up',
        20_000,
        `replica ${replica.port} did not sync`,
      );
    }
    for (let i = 0; i < 3; i++) {
      const sentinel = new SentinelProc(primary.port, this.downAfterMs);
      await sentinel.start();
      this.sentinels.push(sentinel);
    }
    // Each sentinel must know both replicas and the two other sentinels before a failover can work.
    for (const s of this.sentinels) {
      await until(
        async () =>
          (await admin(s.port, 'SENTINEL', 'REPLICAS', MASTER_NAME)).length === 2 &&
          (await admin(s.port, 'SENTINEL', 'SENTINELS', MASTER_NAME)).length === 2,
        30_000,
        `sentinel ${s.port} did not discover the replicas and the other sentinels`,
      );
    }
    this.initialPrimary = primary.port;
  }

  /** How users connect through Sentinel: the sentinels' addresses and the primary's name. */
  get connection() {
    return { kind: 'sentinel', name: MASTER_NAME, sentinels: this.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })) };
  }

  get url() {
    return undefined;
  }

  /** The primary's port as the sentinels report it (the first that answers). */
  async primaryPort() {
    for (const s of this.sentinels) {
      try {
        const [, port] = await admin(s.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME);
        return Number(port);
      } catch {
        /* the next sentinel */
      }
    }
    throw new Error('no sentinel answered');
  }

  server(port) {
    return this.servers.find((s) => s.port === port);
  }

  /** Waits until the sentinels report a primary other than `from`, and it answers as a primary. */
  async waitForSwitch(from, timeoutMs = 30_000) {
    let port;
    await until(
      async () => {
        port = await this.primaryPort();
        return port !== from && (await info(port, 'replication')).role === 'master';
      },
      timeoutMs,
      `the sentinels did not promote a new primary in place of ${from}`,
    );
    return port;
  }

  /** `SENTINEL FAILOVER`: a graceful failover, resolves with the new primary's port once switched. */
  async failover() {
    const from = await this.primaryPort();
    await admin(this.sentinels[0].port, 'SENTINEL', 'FAILOVER', MASTER_NAME);
    return this.waitForSwitch(from);
  }

  async stop() {
    for (const s of this.sentinels) await s.stop().catch(() => {});
    for (const r of this.servers) await r.stop().catch(() => {});
  }
}
