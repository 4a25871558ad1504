/** The options of the module's static methods, shaped as @nestjs/bullmq's (whose names are exported too, as aliases). */
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Provider, Type } from '@nestjs/common';
import type {
  FlowProducerOptions,
  JobSchedulerTemplate,
  Processor,
  QueueEventsOptions,
  QueueOptions,
  RepeatOptions,
  WorkerOptions,
} from 'hopper-queue';

/** Options of the module itself (not of a queue): `forRoot({ extraOptions })`, `forRootAsync({ extraOptions })`. */
export interface HopperModuleExtraOptions {
  /**
   * When true, no Worker or QueueEvents is created for the `@Processor` and
   * `@QueueEventsListener` classes until you call `HopperRegistrar.register()` (alias
   * `BullRegistrar`), e.g. once a feature flag or a leader election says this replica should
   * process. Default false: they are created when the module initialises and start processing
   * once the application has bootstrapped. Application-wide: set it in one `forRoot`.
   */
  manualRegistration?: boolean;
}

/** `forRoot`: what every queue, worker and flow producer of the application shares (connection, prefix, defaultJobOptions, ...). */
export interface SharedHopperConfig extends QueueOptions {
  /** Options of the module itself (manual registration). */
  extraOptions?: HopperModuleExtraOptions;
}

/** A function processing a queue's jobs in this process (the `processors` option of `registerQueue`). */
export type QueueProcessorCallback = Processor;

/** The path (or file URL) of a module exporting a processor, run sandboxed in a child process or worker thread. */
export type QueueSeparateProcessor = string | URL;

/** A processor function with the options of its Worker (`concurrency`, `limiter`, ...). */
export interface QueueAdvancedProcessor extends Partial<WorkerOptions> {
  callback: QueueProcessorCallback;
}

/** A sandboxed processor file with the options of its Worker (`concurrency`, `useWorkerThreads`, ...). */
export interface QueueAdvancedSeparateProcessor extends Partial<WorkerOptions> {
  path: QueueSeparateProcessor;
}

/** One entry of `registerQueue({ processors })`: each gets a Worker of its own. */
export type QueueProcessor = QueueProcessorCallback | QueueSeparateProcessor | QueueAdvancedProcessor | QueueAdvancedSeparateProcessor;

/** `registerQueue`: one queue, by name, with options that override the shared ones. */
export interface RegisterQueueOptions extends QueueOptions {
  /** The queue's name (omitted: the queue named `default`). */
  name?: string;
  /** Which `forRoot` configuration to start from (default: the unnamed one). */
  configKey?: string;
  /**
   * Workers created with the queue, one per entry: a function, the path of a sandboxed processor
   * file, or either with worker options (`{ callback, concurrency }`, `{ path, useWorkerThreads }`).
   * As in @nestjs/bullmq they start with the queue (when it is first injected), not at bootstrap:
   * they use no Nest provider. For a processor that uses your services, write a `@Processor` class.
   */
  processors?: QueueProcessor[];
  /**
   * Accepted for @nestjs/bullmq compatibility; changes nothing: at shutdown Hopper closes the
   * connections it opened either way, and never one you passed in (an ioredis instance is yours to close).
   */
  forceDisconnectOnShutdown?: boolean;
  /**
   * @deprecated @nestjs/bullmq's, unsupported since BullMQ 5. `true` is refused; to share a
   * connection, pass your ioredis instance as `connection`.
   */
  sharedConnection?: boolean;
}

/** `registerFlowProducer`: one flow producer, by name (kept in its `opts.name`, as @nestjs/bullmq does). */
export interface RegisterFlowProducerOptions extends FlowProducerOptions {
  /** The flow producer's name (omitted: `default`). */
  name?: string;
  /** Which `forRoot` configuration to take the connection and prefix from (default: the unnamed one). */
  configKey?: string;
  /** Accepted for @nestjs/bullmq compatibility; changes nothing (see {@link RegisterQueueOptions.forceDisconnectOnShutdown}). */
  forceDisconnectOnShutdown?: boolean;
}

/** A factory of options, as Nest's async modules take. */
export interface AsyncOptions<T> extends Pick<ModuleMetadata, 'imports'> {
  /** Makes the options; its arguments are the providers listed in `inject`. */
  useFactory?: (...args: never[]) => T | Promise<T>;
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  useClass?: Type<OptionsFactory<T>>;
  useExisting?: Type<OptionsFactory<T>>;
  extraProviders?: Provider[];
}

/**
 * A class that builds options (`useClass` / `useExisting`): `createOptions()`, or the names
 * @nestjs/bullmq's factories use (`createSharedConfiguration`, `createRegisterQueueOptions`,
 * `createRegisterFlowProducerOptions`).
 */
export type OptionsFactory<T> =
  | { createOptions(): T | Promise<T> }
  | { createSharedConfiguration(): T | Promise<T> }
  | { createRegisterQueueOptions(): T | Promise<T> }
  | { createRegisterFlowProducerOptions(): T | Promise<T> };

/** `forRootAsync`. */
export interface SharedHopperAsyncConfig extends AsyncOptions<QueueOptions> {
  /** Options of the module itself (manual registration): given here, not by the factory. */
  extraOptions?: HopperModuleExtraOptions;
}

/**
 * `registerQueueAsync`: the options of one named queue, made by a factory. Without a factory
 * (`registerQueueAsync({ name })`), the queue takes the `forRoot` configuration as it is.
 */
export interface RegisterQueueAsyncOptions extends AsyncOptions<Omit<RegisterQueueOptions, 'name' | 'configKey'>> {
  name?: string;
  configKey?: string;
}

/** `registerFlowProducerAsync`; without a factory, the `forRoot` configuration's connection and prefix. */
export interface RegisterFlowProducerAsyncOptions extends AsyncOptions<Omit<RegisterFlowProducerOptions, 'name' | 'configKey'>> {
  name?: string;
  configKey?: string;
}

/** `@Processor(...)` options. */
export interface ProcessorOptions {
  /** The queue to process. */
  name?: string;
  /** Which `forRoot` configuration the worker uses when the queue is not registered here (default: the unnamed one). */
  configKey?: string;
}

/** Worker options given to `@Processor(queue, options)` (connection and prefix come from the module). */
export type NestWorkerOptions = Omit<WorkerOptions, 'connection'> & Partial<Pick<WorkerOptions, 'connection'>>;

/** `@QueueEventsListener(...)` options. */
export type NestQueueEventsOptions = Partial<QueueEventsOptions>;

/** A scheduler declared with `@JobScheduler(...)`. */
export interface DeclaredJobScheduler {
  id: string;
  repeat: RepeatOptions;
  template?: JobSchedulerTemplate<unknown>;
}

// @nestjs/bullmq's names for the same types, so code that imports them only changes its import path.
/** @nestjs/bullmq's name for {@link SharedHopperConfig}. */
export type BullRootModuleOptions = SharedHopperConfig;
/** @nestjs/bullmq's name for {@link SharedHopperAsyncConfig}. */
export type SharedBullAsyncConfiguration = SharedHopperAsyncConfig;
/** @nestjs/bullmq's name for {@link HopperModuleExtraOptions}. */
export type BullModuleExtraOptions = HopperModuleExtraOptions;
/** @nestjs/bullmq's name for {@link QueueProcessor}. */
export type BullQueueProcessor = QueueProcessor;
/** @nestjs/bullmq's name for {@link QueueProcessorCallback}. */
export type BullQueueProcessorCallback = QueueProcessorCallback;
/** @nestjs/bullmq's name for {@link QueueSeparateProcessor}. */
export type BullQueueSeparateProcessor = QueueSeparateProcessor;
/** @nestjs/bullmq's name for {@link QueueAdvancedProcessor}. */
export type BullQueueAdvancedProcessor = QueueAdvancedProcessor;
/** @nestjs/bullmq's name for {@link QueueAdvancedSeparateProcessor}. */
export type BullQueueAdvancedSeparateProcessor = QueueAdvancedSeparateProcessor;
/** @nestjs/bullmq's name for {@link NestQueueEventsOptions}. */
export type NestQueueEventOptions = NestQueueEventsOptions;
/** @nestjs/bullmq's options class of `forRootAsync({ useClass })`. */
export interface SharedBullConfigurationFactory {
  createSharedConfiguration(): SharedHopperConfig | Promise<SharedHopperConfig>;
}
/** @nestjs/bullmq's options class of `registerQueueAsync({ useClass })`. */
export interface RegisterQueueOptionsFactory {
  createRegisterQueueOptions(): RegisterQueueOptions | Promise<RegisterQueueOptions>;
}
/** @nestjs/bullmq's options class of `registerFlowProducerAsync({ useClass })` (its method name is the queue's, as there). */
export interface RegisterFlowProducerOptionsFactory {
  createRegisterQueueOptions(): RegisterFlowProducerOptions | Promise<RegisterFlowProducerOptions>;
}
