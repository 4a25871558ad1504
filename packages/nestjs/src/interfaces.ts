/** The options of the module's static methods, shaped as @nestjs/bullmq's. */
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Provider, Type } from '@nestjs/common';
import type {
  FlowProducerOptions,
  JobSchedulerTemplate,
  QueueEventsOptions,
  QueueOptions,
  RepeatOptions,
  WorkerOptions,
} from 'hopper-queue';

/** `forRoot`: what every queue, worker and flow producer of the application shares (connection, prefix, defaultJobOptions, ...). */
export type SharedHopperConfig = QueueOptions;

/** `registerQueue`: one queue, by name, with options that override the shared ones. */
export interface RegisterQueueOptions extends QueueOptions {
  /** The queue's name (omitted: the default queue). */
  name?: string;
  /** Which `forRoot` configuration to start from (default: the unnamed one). */
  configKey?: string;
}

/** `registerFlowProducer`: one flow producer, by name. */
export interface RegisterFlowProducerOptions extends FlowProducerOptions {
  name?: string;
  configKey?: string;
}

/** A factory of options, as Nest's async modules take. */
export interface AsyncOptions<T> extends Pick<ModuleMetadata, 'imports'> {
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
export type SharedHopperAsyncConfig = AsyncOptions<SharedHopperConfig>;

/** `registerQueueAsync`: the options of one named queue, made by a factory. */
export interface RegisterQueueAsyncOptions extends AsyncOptions<QueueOptions> {
  name?: string;
  configKey?: string;
}

/** `registerFlowProducerAsync`. */
export interface RegisterFlowProducerAsyncOptions extends AsyncOptions<FlowProducerOptions> {
  name?: string;
  configKey?: string;
}

/** `@Processor(...)` options. */
export interface ProcessorOptions {
  /** The queue to process. */
  name?: string;
  /** Which `forRoot` configuration the worker uses (default: the unnamed one). */
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
