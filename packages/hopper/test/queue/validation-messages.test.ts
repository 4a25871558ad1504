import { describe, expect, it } from 'vitest';
import {
  InvalidJobIdError,
  InvalidNameError,
  InvalidOptionsError,
  JobActiveError,
  Queue,
  UnsupportedOptionError,
} from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

// Code migrated from BullMQ matches its error messages: each refusal starts with BullMQ's phrase,
// keeps Hopper's typed error, and writes nothing.
describe("validation messages keep BullMQ's key phrase", () => {
  it('queue names', () => {
    expect(() => new Queue('', { connection: env.url })).toThrow(InvalidNameError);
    expect(() => new Queue('', { connection: env.url })).toThrow(/^Queue name must be provided/);
    expect(() => new Queue('name:test', { connection: env.url })).toThrow(/^Queue name cannot contain :/);
    expect(() => new Queue('name test', { connection: env.url })).toThrow(/would break Redis keys/);
  });

  it('job ids and deduplication', async () => {
    const queue = env.queue(env.queueName());
    await expect(queue.add('x', {}, { jobId: '2' })).rejects.toThrow(InvalidJobIdError);
    await expect(queue.add('x', {}, { jobId: '2' })).rejects.toThrow(/^Custom Id cannot be integers/);
    // An empty custom id is refused (BullMQ ignores it and generates an id).
    await expect(queue.add('x', {}, { jobId: '' })).rejects.toThrow(InvalidJobIdError);
    await expect(queue.add('x', {}, { deduplication: { id: '' } })).rejects.toThrow(InvalidOptionsError);
    await expect(queue.add('x', {}, { deduplication: { id: '' } })).rejects.toThrow(/^Deduplication id must be provided/);
    const parent = await queue.add('parent', {});
    await expect(
      queue.add('child', {}, { deduplication: { id: 'd' }, parent: { id: parent.id as string, queue: parent.queueQualifiedName } }),
    ).rejects.toThrow(/^Deduplication and parent options cannot be used together/);
    // BullMQ 6 removed debounce (its message is kept in the refusal).
    const legacy = { debounce: { id: 'legacy' } } as object;
    await expect(queue.add('x', {}, legacy)).rejects.toThrow(UnsupportedOptionError);
    await expect(queue.add('x', {}, legacy)).rejects.toThrow('Debounce option has been removed. Use deduplication option instead');
    // Hopper keeps ':' in custom ids (DESIGN, "Ids"): BullMQ refuses most of them.
    expect((await queue.add('x', {}, { jobId: 'welcome:42' })).id).toBe('welcome:42');
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 2 });
  });

  it("obliterate with active jobs: BullMQ's message word for word (Bull Board matches it whole)", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const worker = env.worker(name, null);
    expect(await worker.getNextJob('t')).toBeDefined();
    const refused = queue.obliterate();
    await expect(refused).rejects.toThrow(JobActiveError);
    await expect(refused).rejects.toThrow(/^Cannot obliterate queue with active jobs$/);
    expect(await queue.getJobCounts('active')).toEqual({ active: 1 });
  });
});
