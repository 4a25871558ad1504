// Turns a row's connection description (JSON: it travels to worker.mjs on its command line) into
// Hopper's `connection` option: a `redis://` URL as is; `{ kind: 'sentinel', sentinels, name }`
// as ioredis's Sentinel options (what a user passes to reach a Sentinel-managed primary);
// `{ kind: 'options', options }` as those ioredis options;
// `{ kind: 'cluster', nodes }` as an ioredis Cluster client.
import { Cluster } from 'ioredis';

export function connectionFor(spec) {
  if (typeof spec === 'string') return spec;
  if (spec?.kind === 'sentinel') return { sentinels: spec.sentinels, name: spec.name };
  if (spec?.kind === 'options') return spec.options;
  if (spec?.kind === 'cluster') {
    return new Cluster(spec.nodes, {
      // Workers ride out a failover instead of failing commands (Hopper sets this on the clients
      // it opens itself; a Cluster passed in keeps the caller's options).
      redisOptions: { maxRetriesPerRequest: null },
      retryDelayOnClusterDown: 200,
      retryDelayOnFailover: 200,
      retryDelayOnTryAgain: 100,
      maxRedirections: 64,
    });
  }
  throw new Error(`Unknown connection description: ${JSON.stringify(spec)}`);
}

/** Closes what connectionFor opened, if it is a client (Hopper never closes a client passed in). */
export function releaseConnection(connection) {
  if (connection && typeof connection === 'object' && typeof connection.disconnect === 'function') connection.disconnect();
}
