/**
 * Starts the workers and queue-event listeners the application declared, once it has
 * bootstrapped (every module initialised: a processor never runs before the services it uses are
 * ready), and upserts the job schedulers declared with `@JobScheduler`.
 */
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { Queue, QueueEvents, Worker, type Job, type QueueOptions } from 'hopper-queue';
import type { QueueEventsHost, WorkerHost } from './hosts.js';
import type { DeclaredJobScheduler, NestQueueEventsOptions, NestWorkerOptions, ProcessorOptions } from './interfaces.js';
import { HopperRegistry } from './registry.js';
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

/** How long bootstrap waits for a listener's readers to be positioned. */
const READY_TIMEOUT_MS = 10_000;

@Injectable()
export class HopperExplorer implements OnApplicationBootstrap {
  private readonly logger = new Logger('HopperModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
    private readonly registry: HopperRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const wrapper of this.discovery.getProviders()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!type || typeof type !== 'function') continue;
      const processor = Reflect.getMetadata(PROCESSOR_METADATA, type) as ProcessorOptions | undefined;
      const listener = Reflect.getMetadata(QUEUE_EVENTS_LISTENER_METADATA, type) as
        { names: string[]; multi: boolean; options: NestQueueEventsOptions } | undefined;
      if (!processor && !listener) continue;
      if (!wrapper.isDependencyTreeStatic()) {
        throw new Error(
          `${type.name}: a @Processor or @QueueEventsListener must be a singleton provider (not request- or transient-scoped).`,
        );
      }
      const instance = wrapper.instance as Instance;
      if (processor) await this.startWorker(type, instance, processor);
      if (listener) await this.startListener(type, instance, listener);
    }
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

  private async startWorker(type: { name: string }, instance: Instance, options: ProcessorOptions): Promise<void> {
    const name = options.name;
    if (!name) throw new Error(`${type.name}: @Processor needs the name of the queue it processes.`);
    if (typeof instance.process !== 'function') {
      throw new Error(`${type.name}: a @Processor class must extend WorkerHost and implement process(job, token, signal).`);
    }
    const base = this.baseOptions(name, options.configKey);
    const workerOptions = (Reflect.getMetadata(WORKER_OPTIONS_METADATA, type) as NestWorkerOptions | undefined) ?? {};
    const host = instance as unknown as WorkerHost;
    const processorFn = (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => host.process(job, token, signal);
    const worker = new Worker(name, processorFn, {
      ...(base.connection !== undefined ? { connection: base.connection } : {}),
      ...(base.prefix !== undefined ? { prefix: base.prefix } : {}),
      ...workerOptions,
    });
    (host as unknown as { workerInstance: Worker }).workerInstance = worker;
    this.registry.workers.push(worker);
    const handlers = this.methodsWith<{ event: string }>(instance, ON_WORKER_EVENT_METADATA);
    for (const { method, meta } of handlers) {
      worker.on(meta.event, (...args: unknown[]) => (instance[method] as (...a: unknown[]) => unknown).apply(instance, args));
    }
    // A worker error with no listener would crash the process: log it unless the class listens.
    if (!handlers.some((h) => h.meta.event === 'error')) {
      worker.on('error', (error: Error) => this.logger.error(`Worker of queue "${name}": ${error.message}`, error.stack));
    }
    const schedulers = (Reflect.getMetadata(JOB_SCHEDULERS_METADATA, type) as DeclaredJobScheduler[] | undefined) ?? [];
    if (schedulers.length > 0) {
      const queue = new Queue(name, base);
      try {
        for (const s of schedulers) await queue.upsertJobScheduler(s.id, s.repeat, s.template);
      } finally {
        await queue.close();
      }
    }
  }

  private async startListener(
    type: { name: string },
    instance: Instance,
    listener: { names: string[]; multi: boolean; options: NestQueueEventsOptions },
  ): Promise<void> {
    const handlers = this.methodsWith<{ event: string }>(instance, ON_QUEUE_EVENT_METADATA);
    const host = instance as unknown as QueueEventsHost;
    const all: QueueEvents[] = [];
    const positioned: Promise<unknown>[] = [];
    for (const name of listener.names) {
      const base = this.baseOptions(name, undefined);
      const events = new QueueEvents(name, {
        ...(base.connection !== undefined ? { connection: base.connection } : {}),
        ...(base.prefix !== undefined ? { prefix: base.prefix } : {}),
        ...listener.options,
      });
      for (const { method, meta } of handlers) {
        events.on(meta.event, (...args: unknown[]) =>
          (instance[method] as (...a: unknown[]) => unknown).apply(instance, listener.multi ? [...args, name] : args),
        );
      }
      if (!handlers.some((h) => h.meta.event === 'error')) {
        events.on('error', (error: Error) =>
          this.logger.error(`QueueEvents of queue "${name}" (${type.name}): ${error.message}`, error.stack),
        );
      }
      // 'ready': the reader has pinned its position, so no event after bootstrap is missed.
      if (listener.options.autorun !== false) positioned.push(new Promise((resolve) => events.once('ready', resolve)));
      all.push(events);
      this.registry.queueEvents.push(events);
    }
    (host as unknown as { queueEventsInstances: QueueEvents[] }).queueEventsInstances = all;
    // Bootstrap waits for the readers, but not forever: an unreachable Redis is reported, not a hang.
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
  }
}
