/**
 * No silent acceptance: walks BullMQ's own option types (from its published .d.ts, read with the
 * TypeScript compiler API) and proves that every option is either honoured (listed in
 * IMPLEMENTED_OPTIONS) or refused (listed in UNSUPPORTED_OPTIONS, and passing it throws an
 * UnsupportedOptionError naming it, with nothing written). Repeat options are checked by the
 * schedule validation, which refuses unknown ones with an InvalidScheduleError.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  FlowProducer,
  IMPLEMENTED_OPTIONS,
  InvalidScheduleError,
  Queue,
  QueueEvents,
  UNSUPPORTED_OPTIONS,
  UnsupportedOptionError,
  validateRepeat,
  Worker,
  type OptionsOwner,
} from '../../src/index.js';
import { REPEAT_OPTION_KEYS } from '../../src/schedule/repeat-options.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** The option types to walk, as type expressions over BullMQ's exports (`B`). */
const BULLMQ_TYPES: Record<string, string> = {
  Queue: 'B.QueueOptions',
  Worker: 'B.WorkerOptions',
  QueueEvents: 'B.QueueEventsOptions',
  FlowProducer: 'B.QueueBaseOptions & B.KeyPrefixOptions',
  job: 'B.JobsOptions',
  bulkJob: 'B.BulkJobOptions',
  deduplication: "NonNullable<B.JobsOptions['deduplication']>",
  settings: 'B.AdvancedOptions',
  repeat: 'B.RepeatOptions',
};

/** Option names of each BullMQ type, read from the installed package's declarations. */
function bullmqOptionNames(): { version: string; names: Record<string, string[]> } {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('bullmq/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { version: string; types?: string; typings?: string };
  const typesEntry = join(dirname(pkgPath), pkg.types ?? pkg.typings ?? 'dist/esm/index.d.ts');
  const probe = join(dirname(pkgPath), '__hopper_probe__.ts');
  const source =
    `import type * as B from ${JSON.stringify(typesEntry.replace(/\.d\.ts$/, ''))};\n` +
    `export type Probe = { ${Object.entries(BULLMQ_TYPES)
      .map(([key, type]) => `${key}: ${type}`)
      .join('; ')} };\n`;
  const host = ts.createCompilerHost({});
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (file) => (file === probe ? source : readFile(file));
  host.fileExists = (file) => file === probe || fileExists(file);
  const program = ts.createProgram([probe], { strict: true, skipLibCheck: true, noEmit: true, module: ts.ModuleKind.CommonJS }, host);
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(probe);
  const alias = file?.statements.find(ts.isTypeAliasDeclaration);
  if (!alias) throw new Error('could not read the probe');
  const probeType = checker.getTypeAtLocation(alias.name);
  const names: Record<string, string[]> = {};
  for (const prop of checker.getPropertiesOfType(probeType)) {
    const type = checker.getNonNullableType(checker.getTypeOfSymbol(prop));
    names[prop.name] = checker.getPropertiesOfType(type).map((p) => p.name);
  }
  return { version: pkg.version, names };
}

const { version, names } = bullmqOptionNames();
const PROBE = '__probe__';

/** The owner whose tables cover a walked type. */
const OWNER_OF: Record<string, OptionsOwner> = {
  Queue: 'Queue',
  Worker: 'Worker',
  QueueEvents: 'QueueEvents',
  FlowProducer: 'FlowProducer',
  job: 'job',
  bulkJob: 'job',
  deduplication: 'deduplication',
  settings: 'settings',
};

describe(`BullMQ ${version} options: each is honoured or refused`, () => {
  it('reads the option types from BullMQ', () => {
    for (const key of Object.keys(BULLMQ_TYPES)) expect(names[key]?.length, key).toBeGreaterThan(0);
    expect(names.job).toContain('attempts');
    expect(names.Worker).toContain('concurrency');
  });

  it('lists every option in exactly one table', () => {
    const unlisted: string[] = [];
    for (const [key, owner] of Object.entries(OWNER_OF)) {
      for (const option of names[key]) {
        const implemented = IMPLEMENTED_OPTIONS[owner].includes(option);
        const refused = Object.hasOwn(UNSUPPORTED_OPTIONS[owner], option);
        expect(implemented && refused, `${owner}.${option} is in both tables`).toBe(false);
        if (!implemented && !refused) unlisted.push(`${owner}.${option}`);
      }
    }
    expect(unlisted, 'BullMQ options neither honoured nor refused').toEqual([]);
  });

  it('refuses each unsupported component option at construction, before connecting', () => {
    const base = { connection: env.url, prefix: env.prefix };
    const name = env.queueName();
    const construct: Record<'Queue' | 'Worker' | 'QueueEvents' | 'FlowProducer', (opts: object) => unknown> = {
      Queue: (opts) => new Queue(name, { ...base, ...opts }),
      Worker: (opts) => new Worker(name, null, { ...base, autorun: false, ...opts }),
      QueueEvents: (opts) => new QueueEvents(name, { ...base, autorun: false, ...opts }),
      FlowProducer: (opts) => new FlowProducer({ ...base, ...opts }),
    };
    for (const [owner, build] of Object.entries(construct)) {
      for (const option of Object.keys(UNSUPPORTED_OPTIONS[owner as OptionsOwner])) {
        expect(() => build({ [option]: PROBE }), `${owner}.${option}`).toThrow(UnsupportedOptionError);
        try {
          build({ [option]: PROBE });
        } catch (err) {
          expect((err as UnsupportedOptionError).option).toBe(option);
          expect((err as Error).message).toContain(option);
        }
      }
    }
    for (const option of Object.keys(UNSUPPORTED_OPTIONS.settings)) {
      expect(() => construct.Worker({ settings: { [option]: PROBE } }), `settings.${option}`).toThrow(UnsupportedOptionError);
    }
    for (const option of Object.keys(UNSUPPORTED_OPTIONS.job)) {
      expect(() => construct.Queue({ defaultJobOptions: { [option]: PROBE } }), `defaultJobOptions.${option}`).toThrow(
        UnsupportedOptionError,
      );
    }
  });

  it('refuses each unsupported job option in add, addBulk, flows and schedulers, writing nothing', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const flows = env.flows();
    const jobCases = Object.keys(UNSUPPORTED_OPTIONS.job).map((option) => ({ [option]: PROBE }));
    const dedupCases = Object.keys(UNSUPPORTED_OPTIONS.deduplication).map((option) => ({ deduplication: { id: 'd', [option]: PROBE } }));
    for (const opts of [...jobCases, ...dedupCases]) {
      const what = JSON.stringify(opts);
      await expect(queue.add('x', {}, opts), what).rejects.toBeInstanceOf(UnsupportedOptionError);
      await expect(queue.addBulk([{ name: 'x', data: {}, opts }]), what).rejects.toBeInstanceOf(UnsupportedOptionError);
      await expect(flows.add({ name: 'x', queueName: name, data: {}, opts }), what).rejects.toBeInstanceOf(UnsupportedOptionError);
    }
    // A scheduler's template takes job options too (deduplication is refused there for another reason).
    for (const opts of jobCases) {
      await expect(queue.upsertJobScheduler('s', { every: 60_000 }, { name: 'x', opts }), JSON.stringify(opts)).rejects.toBeInstanceOf(
        UnsupportedOptionError,
      );
    }
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, prioritized: 0 });
    expect(await queue.getJobSchedulersCount()).toBe(0);
  });

  it("says what to use instead of custom repeat strategies, and accepts BullMQ's defaults of refused options", async () => {
    const queue = env.queue(env.queueName());
    expect(() => env.worker(queue.name, null, { settings: { repeatStrategy: () => 0 } } as object)).toThrow(/upsertJobScheduler/);
    const job = await queue.add('x', {}, { deduplication: { id: 'd', reschedule: false } } as object);
    expect(job.id).toBeDefined();
    const worker = env.worker(queue.name, null, { skipLockRenewal: false } as object);
    expect(worker.isRunning()).toBe(false);
  });

  it('honours or refuses each repeat option of upsertJobScheduler', () => {
    const known: readonly string[] = REPEAT_OPTION_KEYS;
    for (const option of names.repeat) {
      if (known.includes(option)) continue;
      expect(() => validateRepeat({ every: 60_000, [option]: 1 }), `repeat.${option}`).toThrow(InvalidScheduleError);
    }
  });
});
