/**
 * The Functions library in Redis Cluster (issue 21): a call that finds it missing loads it on
 * every master, so queues in every slot run. Deletes only this build's own library (its name
 * carries the source hash), so other versions sharing the cluster are not touched.
 */
import { describe, expect, it } from 'vitest';
import { LIBRARY } from '../../src/backend/redis/scripts.generated.js';
import { Queue } from '../../src/index.js';
import { cluster, track, uniqueName } from '../helpers/cluster.js';

describe('Redis Cluster: the Functions library', () => {
  it('is loaded on every master by the first call that finds it missing', async () => {
    const connection = cluster();
    const queue = track(new Queue(uniqueName(), { connection }));
    await queue.waitUntilReady();
    const masters = connection.nodes('master');
    expect(masters.length).toBeGreaterThanOrEqual(3);
    for (const node of masters) {
      await node.call('FUNCTION', 'DELETE', LIBRARY.name).catch((err: Error) => {
        if (!/not found/i.test(err.message)) throw err;
      });
    }
    await queue.add('a', {});
    for (const node of masters) {
      const list = (await node.call('FUNCTION', 'LIST', 'LIBRARYNAME', LIBRARY.name)) as unknown[][];
      expect(list.map((entry) => String(entry[1]))).toContain(LIBRARY.name);
    }
    // Queues in other slots (other masters) run without loading again.
    for (let i = 0; i < 6; i++) {
      const other = track(new Queue(uniqueName(), { connection }));
      await other.add('b', {});
      expect(await other.getJobCounts('waiting')).toEqual({ waiting: 1 });
    }
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
  });
});
