/**
 * A Redis Functions library already loaded under Hopper's library name, with other functions
 * (issue 34): every call failed with a bare `ERR Function not found`, and the Queue and Worker
 * stayed broken after it was removed. Now a LibraryConflictError says what to do, and both recover
 * once the library is deleted. On a private redis-server (it loads a library of Hopper's name).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LIBRARY } from '../../src/backend/redis/scripts.generated.js';
import { LibraryConflictError, Queue, Worker } from '../../src/index.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { useHopper } from '../helpers/hopper.js';
import { once, until } from '../helpers/wait.js';

const env = useHopper();

describe('a foreign library under Hopper’s library name', () => {
  it('is reported with a typed error that says what to do, and the Queue and Worker recover once it is deleted', async () => {
    env.expectErrors((err) => err instanceof LibraryConflictError);
    const server = await startRedisServer();
    env.track({ close: () => server.stop() });
    const admin = new Redis(server.url);
    env.track({ close: async () => void admin.disconnect() });
    await admin.call('FUNCTION', 'LOAD', `#!lua name=${LIBRARY.name}\nredis.register_function('someone_else', function() return 1 end)`);
    const name = env.queueName();
    const opts = { connection: server.url, prefix: env.prefix };
    const queue = env.track(new Queue(name, opts));
    const worker = env.track(new Worker(name, async () => 'ran', opts));
    const err = await queue.waitUntilReady().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LibraryConflictError);
    expect((err as Error).message).toContain(`FUNCTION DELETE ${LIBRARY.name}`);
    await expect(queue.add('x', {})).rejects.toBeInstanceOf(LibraryConflictError);

    await admin.call('FUNCTION', 'DELETE', LIBRARY.name);
    const completed = once<[unknown, unknown]>(worker, 'completed', () => true, 20_000);
    await until(
      () =>
        queue.waitUntilReady().then(
          () => true,
          () => false,
        ),
      'the queue started',
      20_000,
      100,
    );
    await queue.add('x', {});
    const [, result] = await completed;
    expect(result).toBe('ran');
  });
});
