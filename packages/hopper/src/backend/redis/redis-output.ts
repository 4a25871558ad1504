/**
 * Job output streams in the Redis backend (`job.stream`, `queue.readStream`): one capped Redis
 * Stream per job (`o:<id>`, deleted with the job), written by appendOutput.lua, read with XRANGE,
 * and followed by every reader of a backend through one shared blocking XREAD over all the
 * streams they wait on (and the queue's wake stream `ow`, which a joining reader writes to so a
 * blocked XREAD picks it up at once). All keys share the queue's hash tag: one XREAD per queue,
 * also in Redis Cluster.
 */
import { OUTPUT_WAIT_MAX, type Fence, type OutputEntry, type OutputWait, type WriteCode } from '../backend.js';
import { RedisQueueRelease } from './redis-release.js';
import { toWriteCode } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** Entries the wake stream keeps (a wake only needs to be newer than the reader's last id). */
const WAKE_CAP = 100;

type RawEntry = [string, string[]];

function toEntry([id, fields]: RawEntry): OutputEntry {
  let attempt = 0;
  let kind: OutputEntry['kind'] = 'end';
  let value = '';
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === 'a') {
      attempt = Number(fields[i + 1]);
    } else if (name === 's' || name === 'j') {
      kind = name === 's' ? 'text' : 'json';
      value = fields[i + 1];
    }
  }
  return { id, attempt, kind, value };
}

export abstract class RedisQueueOutput extends RedisQueueRelease {
  async appendOutput(
    id: string,
    chunks: { json: boolean; value: string }[],
    ended: boolean,
    fence: Fence,
    seq: number,
    maxLen: number,
  ): Promise<WriteCode> {
    const rest: string[] = [];
    for (const chunk of chunks) rest.push(chunk.json ? 'j' : 's', chunk.value);
    const code = await runScript(
      this.client,
      SCRIPTS.appendOutput,
      { job: this.keys.job(id), out: this.keys.output(id) },
      { token: fence.token, attempt: fence.attempt, seq, maxLen, ended: ended ? 1 : 0 },
      rest,
    );
    // -6: more chunks than a call takes (the caller splits its chunks; never sent by job.stream).
    if (code === -6) throw new RangeError(`appendOutput takes at most 200 chunks per call, got ${chunks.length}.`);
    return toWriteCode(code, 'appendOutput');
  }

  async readOutput(id: string, after: string, count: number): Promise<OutputEntry[]> {
    const reply = (await this.client.call('XRANGE', [this.keys.output(id), `(${after}`, '+', 'COUNT', count])) as RawEntry[];
    return reply.map(toEntry);
  }

  async runOf(id: string): Promise<string | undefined> {
    return (await this.client.hget(this.keys.job(id), 'ru')) ?? undefined;
  }

  async lastOutput(id: string): Promise<OutputEntry | undefined> {
    const reply = (await this.client.call('XREVRANGE', [this.keys.output(id), '+', '-', 'COUNT', 1])) as RawEntry[];
    return reply[0] && toEntry(reply[0]);
  }

  async waitOutput(
    lane: number,
    reads: { id: string; after: string }[],
    wakeAfter: string,
    blockMs: number,
    count: number,
  ): Promise<OutputWait> {
    if (reads.length > OUTPUT_WAIT_MAX) throw new RangeError(`waitOutput takes at most ${OUTPUT_WAIT_MAX} streams, got ${reads.length}.`);
    const client = (this.outputClients[lane] ??= this.blockingClient());
    const streams = [this.keys.outputWake, ...reads.map((r) => this.keys.output(r.id))];
    const ids = [wakeAfter === '' ? '$' : wakeAfter, ...reads.map((r) => r.after)];
    this.fitBlockingDeadline(client, blockMs);
    const reply = (await client.call('XREAD', ['COUNT', count, 'BLOCK', blockMs, 'STREAMS', ...streams, ...ids])) as
      [string, RawEntry[]][] | null;
    const entries = new Map<string, OutputEntry[]>();
    let wake = wakeAfter;
    const prefix = this.keys.output('');
    for (const [key, raw] of reply ?? []) {
      if (key === this.keys.outputWake) {
        wake = raw.at(-1)?.[0] ?? wake;
      } else if (raw.length > 0) {
        entries.set(key.slice(prefix.length), raw.map(toEntry));
      }
    }
    // Waiting from "now" ('$'): later waits must not miss a wake written between two calls.
    if (wake === '') wake = await this.lastWake();
    return { entries, wake };
  }

  async wakeOutputWaits(): Promise<void> {
    await this.client.call('XADD', [this.keys.outputWake, 'MAXLEN', '~', WAKE_CAP, '*', 'w', '1']);
  }

  /** The wake stream's last entry id ('0-0' when it has none). */
  private async lastWake(): Promise<string> {
    const reply = (await this.client.call('XREVRANGE', [this.keys.outputWake, '+', '-', 'COUNT', 1])) as RawEntry[];
    return reply[0]?.[0] ?? '0-0';
  }
}
