/**
 * Finds the `@Processor` and `@QueueEventsListener` providers of the application and creates
 * their Workers and QueueEvents (`register`, when the module initialises or, with manual
 * registration, when you call `HopperRegistrar.register()`); starts them once the application has
 * bootstrapped (`start`: every module initialised, so a processor never runs before the services
 * it uses are ready), and upserts the job schedulers declared with `@JobScheduler`.
 */
import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { Queue, QueueEvents, Worker, type Job, type QueueOptions } from 'hopper-queue';
import { invalidOptions } from './errors.js';
import type { WorkerHost } from './hosts.js';
import type { DeclaredJobScheduler, NestQueueEventsOptions, NestWorkerOptions, ProcessorOptions } from './interfaces.js';
import { HopperRegistry, inheritedOptions } from './registry.js';
import {
  JOB_SCHEDULERS_METADATA,
  ON_QUEUE_EVENT_METADATA,
  ON_WORKER_EVENT_METADATA,
  PROCESSOR_METADATA,
  QUEUE_EVENTS_LISTENER_METADATA,
  WORKER_OPTIONS_METADATA,
  getSharedConfigToken,
} from './tokens.js';

type Instance = Record<string, unknown>;
type Wrapper = ReturnType<DiscoveryService['getProviders']>[number];
type ListenerMetadata = { names: string[]; multi: boolean; options: NestQueueEventsOptions };

/** A provider to register: its class, its instance, and what it declares. */
interface Declared {
  type: { name: string };
  instance: Instance;
  processor?: ProcessorOptions;
  listener?: ListenerMetadata;
}

/** What starting a registered provider does (run its worker, declare its schedulers, wait for its readers). */
type Starter = () => Promise<void>;

/** How long a start waits for a listener's readers to be positioned. */
const READY_TIMEOUT_MS = 10_000;

/**
 * The class a provider was declared with. A class provider's is its metatype; a value provider
 * has no metatype, and a factory provider's metatype is its factory: theirs is the instance's
 * constructor (a processor provided with `useValue` or `useFactory` gets its Worker too).
 */
function declaredClass(wrapper: Wrapper): object | undefined {
  if (wrapper.metatype && !wrapper.inject) return wrapper.metatype;
  const instance: unknown = wrapper.instance;
  if (instance === null || typeof instance !== 'object') return undefined;
  return (instance as { constructor?: object }).constructor;
}

@Injectable()
export class HopperExplorer {
  private readonly logger = new Logger('HopperModule');
  /** Instances that have their Worker or QueueEvents: registering again skips them. */
  private readonly registered = new WeakSet<object>();
  private bootstrapped = false;
  /** What the application's bootstrap starts (registered before it). */
  private pending: Starter[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
    private readonly registry: HopperRegistry,
  ) {}

  /**
   * Creates the Worker of every `@Processor` and the QueueEvents of every `@QueueEventsListener`
   * that has none yet (at once: `this.worker` is set when this returns). Before the application
   * has bootstrapped they start at bootstrap and the promise resolves at once; after, they start
   * now and it resolves when they have (listeners positioned, schedulers declared), or rejects if
   * a scheduler could not be declared (also logged). Throws, creating nothing, on a misdeclared
   * provider.
   */
  register(): Promise<void> {
    const starters = this.create(this.discover());
    if (!this.bootstrapped) {
      this.pending.push(...starters);
      return Promise.resolve();
    }
    const started = this.run(starters);
    // Logged here as well: a caller may not await register().
    started.catch((error: unknown) => this.logger.error(`Starting the registered workers failed: ${String(error)}`));
    return started;
  }

  /** Called at the application's bootstrap: starts what was registered before it. */
  start(): Promise<void> {
    this.bootstrapped = true;
    return this.run(this.pending.splice(0));
  }

  private async run(starters: Starter[]): Promise<void> {
    await Promise.all(starters.map((start) => start()));
  }

  /** The providers to register, each checked before anything is created. */
  private discover(): Declared[] {
    const found: Declared[] = [];
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      // `useExisting` is an alias: its instance is the provider it points to, registered as that one.
      if (wrapper.isAlias) continue;
      const type = declaredClass(wrapper);
      if (!type) continue;
      const processor = Reflect.getMetadata(PROCESSOR_METADATA, type) as ProcessorOptions | undefined;
      const listener = Reflect.getMetadata(QUEUE_EVENTS_LISTENER_METADATA, type) as ListenerMetadata | undefined;
      if (!processor && !listener) continue;
      const name = (type as { name?: string }).name ?? 'anonymous';
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        throw invalidOptions(
          `${name}: a @Processor or @QueueEventsListener must be a singleton provider (not request- or transient-scoped).`,
        );
      }
      const instance = wrapper.instance as Instance | undefined;
      if (!instance || seen.has(instance) || this.registered.has(instance)) continue;
      seen.add(instance);
      if (processor && !processor.name) throw invalidOptions(`${name}: @Processor needs the name of the queue it processes.`);
      if (processor && typeof instance.process !== 'function') {
        throw invalidOptions(`${name}: a @Processor class must extend WorkerHost and implement process(job, token, signal).`);
      }
      found.push({ type: { name }, instance, processor, listener });
    }
    return found;
  }

  /** Creates the workers and listeners; if one cannot be created, closes the ones this call created. */
  private create(found: Declared[]): Starter[] {
    const starters: Starter[] = [];
    const created: (Worker | QueueEvents)[] = [];
    try {
      for (const declared of found) {
        if (declared.processor) starters.push(this.createWorker(declared, declared.processor, created));
        if (declared.listener) starters.push(this.createListener(declared, declared.listener, created));
        this.registered.add(declared.instance);
      }
    } catch (error) {
      for (const declared of found) this.registered.delete(declared.instance);
      this.registry.forget(created);
      for (const made of created) made.close().catch(() => undefined);
      throw error;
    }
    return starters;
  }

  /** The options a queue's worker, events or scheduler use: its registration, else the shared config. */
  private baseOptions(queueName: string, configKey: string | undefined): QueueOptions {
    const registered = this.registry.queueOptions.get(queueName);
    if (registered) return registered;
    try {
      return this.moduleRef.get<QueueOptions>(getSharedConfigToken(configKey), { strict: false });
    } catch {
      return {};
    }
  }

  private methodsWith<T>(instance: Instance, key: string): { method: string; meta: T }[] {
    const proto = Object.getPrototypeOf(instance) as object;
    return this.scanner
      .getAllMethodNames(proto)
      .map((method) => ({ method, meta: Reflect.getMetadata(key, (proto as Instance)[method] as object) as T | undefined }))
      .filter((m): m is { method: string; meta: T } => m.meta !== undefined);
  }

  /**
   * A handler of the instance's, called with the event's arguments: what it throws, or its promise
   * rejects with, is logged (an event handler's failure must not break the worker that emits the
   * event, nor crash the process as an unhandled rejection).
   */
  private handler(instance: Instance, method: string, what: string, extra: unknown[] = []): (...args: unknown[]) => void {
    const fn = instance[method] as (...a: unknown[]) => unknown;
    const report = (error: unknown) =>
      this.logger.error(
        `${what} handler ${method} threw: ${error instanceof Error ? error.message : String(error)}`,
        (error as Error)?.stack,
      );
    return (...args: unknown[]) => {
      try {
        const result = fn.apply(instance, extra.length > 0 ? [...args, ...extra] : args);
        if (result instanceof Promise) result.catch(report);
      } catch (error) {
        report(error);
      }
    };
  }

  private createWorker(declared: Declared, options: ProcessorOptions, created: (Worker | QueueEvents)[]): Starter {
    const { type, instance } = declared;
    const name = options.name as string;
    const base = this.baseOptions(name, options.configKey);
    const workerOptions = (Reflect.getMetadata(WORKER_OPTIONS_METADATA, instance.constructor) as NestWorkerOptions | undefined) ?? {};
    const host = instance as unknown as WorkerHost;
    const processorFn = (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => host.process(job, token, signal);
    // Created now, run at start: `this.worker` is usable from onApplicationBootstrap hooks on.
    const inherited = { ...inheritedOptions(base), ...(base.telemetry !== undefined ? { telemetry: base.telemetry } : {}) };
    const worker = new Worker(name, processorFn, { ...inherited, ...workerOptions, autorun: false });
    created.push(worker);
    (host as unknown as { workerInstance: Worker }).workerInstance = worker;
    this.registry.workers.push(worker);
    const handlers = this.methodsWith<{ event: string }>(instance, ON_WORKER_EVENT_METADATA);
    for (const { method, meta } of handlers)
      worker.on(meta.event, this.handler(instance, method, `${type.name} (worker event "${meta.event}")`));
    // A worker error with no listener would crash the process: log it unless the class listens.
    if (!handlers.some((h) => h.meta.event === 'error')) {
      worker.on('error', (error: Error) => this.logger.error(`Worker of queue "${name}": ${error.message}`, error.stack));
    }
    const schedulers = (Reflect.getMetadata(JOB_SCHEDULERS_METADATA, instance.constructor) as DeclaredJobScheduler[] | undefined) ?? [];
    return async () => {
      // `autorun: false` in the decorator's options: the application calls worker.run() itself.
      if (workerOptions.autorun !== false && !this.registry.closing) {
        worker.run().catch((error: unknown) => {
          if (!this.registry.closing) worker.emit('error', error instanceof Error ? error : new Error(String(error)));
        });
      }
      if (schedulers.length === 0) return;
      const queue = new Queue(name, base);
      try {
        for (const s of schedulers) await queue.upsertJobScheduler(s.id, s.repeat, s.template);
      } finally {
        await queue.close();
      }
    };
  }

  private createListener(declared: Declared, listener: ListenerMetadata, created: (Worker | QueueEvents)[]): Starter {
    const { type, instance } = declared;
    const handlers = this.methodsWith<{ event: string }>(instance, ON_QUEUE_EVENT_METADATA);
    const all: QueueEvents[] = [];
    const positioned: Promise<unknown>[] = [];
    for (const name of listener.names) {
      const events = new QueueEvents(name, { ...inheritedOptions(this.baseOptions(name, undefined)), ...listener.options });
      created.push(events);
      for (const { method, meta } of handlers) {
        events.on(meta.event, this.handler(instance, method, `${type.name} (queue event "${meta.event}")`, listener.multi ? [name] : []));
      }
      if (!handlers.some((h) => h.meta.event === 'error')) {
        events.on('error', (error: Error) =>
          this.logger.error(`QueueEvents of queue "${name}" (${type.name}): ${error.message}`, error.stack),
        );
      }
      // 'ready': the reader has pinned its position, so no event after the start is missed.
      if (listener.options.autorun !== false) positioned.push(new Promise((resolve) => events.once('ready', resolve)));
      all.push(events);
      this.registry.queueEvents.push(events);
    }
    (instance as unknown as { queueEventsInstances: QueueEvents[] }).queueEventsInstances = all;
    return async () => {
      // The start waits for the readers, but not forever: an unreachable Redis is reported, not a hang.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), READY_TIMEOUT_MS);
        timer.unref();
      });
      if ((await Promise.race([Promise.all(positioned), timeout])) === 'timeout') {
        this.logger.warn(
          `${type.name}: its QueueEvents were not ready within ${READY_TIMEOUT_MS} ms (is Redis reachable?); they go on trying.`,
        );
      }
      clearTimeout(timer);
    };
  }
}
