/**
 * The migration lock of a queue: one `hopper migrate` per queue at a time, either direction. It
 * lives beside BullMQ's keys (`<prefix>:<queue>:hopper-migrate:lock`), expires after its ttl and is
 * renewed every third of it while the run lasts.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../backend/redis/connection.js';
import { MigrationError } from '../job/errors.js';
import { LOCK, runBullScript } from './bullmq-scripts.js';

/** The migration lock, renewed while the run lasts. */
export class MigrationLock {
  private readonly token = randomBytes(12).toString('base64url');
  private timer: NodeJS.Timeout | undefined;
  lost = false;

  constructor(
    private readonly client: RedisClient,
    private readonly key: string,
    private readonly ttlMs: number,
    private readonly queue: string,
  ) {}

  async take(): Promise<void> {
    const [ok, pttl] = (await runBullScript(this.client, LOCK, [this.key], ['take', this.token, this.ttlMs])) as [number, number];
    if (ok !== 1) {
      throw new MigrationError(
        'locked',
        `Another hopper migrate is moving queue "${this.queue}" (lock ${this.key}, ${pttl} ms left). ` +
          'Wait for it to end; if that process died, its lock expires by itself, then run again (it resumes where it stopped).',
      );
    }
    this.timer = setInterval(
      () => {
        runBullScript(this.client, LOCK, [this.key], ['renew', this.token, this.ttlMs])
          .then((reply) => {
            if ((reply as number[])[0] !== 1) this.lost = true;
          })
          .catch(() => undefined);
      },
      Math.max(50, Math.floor(this.ttlMs / 3)),
    );
    this.timer.unref();
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    await runBullScript(this.client, LOCK, [this.key], ['release', this.token, this.ttlMs]).catch(() => undefined);
  }
}
