// A Redis Cluster for the Cluster rows: three primaries and three replicas on loopback ports
// (lib/redis.mjs CLUSTER_PORTS, away from the 7001-7003 of the repository's cluster tests),
// joined with `redis-cli --cluster create`. Moves one slot between primaries by hand (CLUSTER
// SETSLOT IMPORTING/MIGRATING, MIGRATE in batches, SETSLOT NODE), fails a primary over.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLUSTER_PORTS, RedisProc } from './redis.mjs';
import { admin, info, until } from './admin.mjs';

const run = promisify(execFile);

/** Parses CLUSTER NODES: [{ id, port, master (bool), masterId, slots: [[from, to]], failed }]. */
function parseNodes(text) {
  return String(text)
    .trim()
    .split('\n')
    .map((line) => {
      const f = line.split(' ');
      const flags = f[2].split(',');
      return {
        id: f[0],
        port: Number(f[1].split(':')[1].split('@')[0]),
        master: flags.includes('master'),
        failed: flags.includes('fail') || flags.includes('fail?'),
        masterId: f[3] === '-' ? undefined : f[3],
        slots: f
          .slice(8)
          .filter((s) => !s.startsWith('['))
          .map((s) => s.split('-').map(Number))
          .map(([a, b]) => [a, b ?? a]),
      };
    });
}

export class ClusterSet {
  constructor() {
    this.servers = [];
  }

  async start() {
    for (let i = 0; i < 6; i++) {
      const node = new RedisProc({
        ports: CLUSTER_PORTS,
        bus: true,
        extra: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000', '--cluster-replica-validity-factor', '0'],
      });
      await node.start();
      this.servers.push(node);
    }
    const addresses = this.servers.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
    await this.waitHealthy();
  }

  /** Every live node says cluster_state:ok and every live replica is in sync. */
  async waitHealthy(timeoutMs = 30_000) {
    await until(
      async () => {
        for (const n of this.servers.filter((s) => s.alive)) {
          if (!String(await admin(n.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
          const repl = await info(n.port, 'replication');
          if (repl.role === 'slave' && repl.master_link_status !== 'up') return false;
        }
        return true;
      },
      timeoutMs,
      'the cluster did not become healthy',
    );
  }

  get connection() {
    return { kind: 'cluster', nodes: this.servers.map((n) => ({ host: '127.0.0.1', port: n.port })) };
  }

  get url() {
    return undefined;
  }

  /** The cluster's view from a live node. */
  async nodes() {
    for (const n of this.servers.filter((s) => s.alive)) {
      try {
        return parseNodes(await admin(n.port, 'CLUSTER', 'NODES'));
      } catch {
        /* the next node */
      }
    }
    throw new Error('no cluster node answered');
  }

  async slotOf(key) {
    return Number(await admin(this.servers.find((s) => s.alive).port, 'CLUSTER', 'KEYSLOT', key));
  }

  /** The live primary serving `slot`. */
  async ownerOf(slot) {
    const nodes = await this.nodes();
    return nodes.find((n) => n.master && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b));
  }

  server(port) {
    return this.servers.find((s) => s.port === port);
  }

  /**
   * Moves `slot` from its owner to another primary while clients use it: IMPORTING on the
   * target, MIGRATING on the source, then MIGRATE `batch` keys at a time (`pauseMs` between
   * batches, so the move spans live traffic), then SETSLOT NODE everywhere. Returns figures.
   */
  async migrateSlot(slot, { batch = 20, pauseMs = 20, first } = {}) {
    const nodes = await this.nodes();
    const src = nodes.find((n) => n.master && n.slots.some(([a, b]) => slot >= a && slot <= b));
    const dst = nodes.find((n) => n.master && !n.failed && n.id !== src.id);
    await admin(dst.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', src.id);
    await admin(src.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', dst.id);
    let moved = 0;
    let busy = 0;
    const from = Date.now();
    // `first`: keys matching it move first (say, the jobs' hashes before the queue's lists).
    const ahead = first ? (await admin(src.port, 'CLUSTER', 'GETKEYSINSLOT', slot, 100_000)).filter((k) => first.test(k)) : [];
    for (;;) {
      const keys = ahead.length ? ahead.splice(0, batch) : await admin(src.port, 'CLUSTER', 'GETKEYSINSLOT', slot, batch);
      if (!keys.length) break;
      try {
        await admin(src.port, 'MIGRATE', '127.0.0.1', dst.port, '', 0, 5_000, 'KEYS', ...keys);
      } catch (err) {
        // A key on both sides: something wrote it on the source after it had moved.
        if (!/BUSYKEY/.test(err.message)) throw err;
        busy++;
        await admin(src.port, 'MIGRATE', '127.0.0.1', dst.port, '', 0, 5_000, 'REPLACE', 'KEYS', ...keys);
      }
      moved += keys.length;
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    for (const n of [dst, src, ...nodes.filter((x) => x.master && !x.failed && x.id !== src.id && x.id !== dst.id)]) {
      await admin(n.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', dst.id);
    }
    return { slot, from: src.port, to: dst.port, keys: moved, busyKeys: busy, ms: Date.now() - from };
  }

  /** `CLUSTER FAILOVER` on a replica of `primaryPort` (graceful: the replica catches up first). */
  async failover(primaryPort) {
    const nodes = await this.nodes();
    const primary = nodes.find((n) => n.port === primaryPort);
    const replica = nodes.find((n) => n.masterId === primary.id && !n.failed);
    await admin(replica.port, 'CLUSTER', 'FAILOVER');
    await until(
      async () => (await info(replica.port, 'replication')).role === 'master',
      20_000,
      `replica ${replica.port} was not promoted`,
    );
    return replica.port;
  }

  /** Waits until another node serves `slot` in place of the dead `deadPort`; returns its port. */
  async waitForNewOwner(slot, deadPort, timeoutMs = 30_000) {
    let owner;
    await until(
      async () => {
        owner = await this.ownerOf(slot);
        return owner && owner.port !== deadPort && (await info(owner.port, 'replication')).role === 'master';
      },
      timeoutMs,
      `no replica took over slot ${slot} from ${deadPort}`,
    );
    return owner.port;
  }

  async stop() {
    for (const n of this.servers) await n.stop().catch(() => {});
  }
}
