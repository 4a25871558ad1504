/**
 * `HopperModule` (also exported as `BullModule`): @nestjs/bullmq's static methods, providing
 * Hopper's Queue and FlowProducer under @nestjs/bullmq's tokens.
 */
import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { FlowProducerOptions, QueueOptions } from 'hopper-queue';
import { HopperExplorer } from './explorer.js';
import type {
  AsyncOptions,
  RegisterFlowProducerAsyncOptions,
  RegisterFlowProducerOptions,
  RegisterQueueAsyncOptions,
  RegisterQueueOptions,
  SharedHopperAsyncConfig,
  SharedHopperConfig,
} from './interfaces.js';
import { HopperRegistry } from './registry.js';
import { getFlowProducerToken, getQueueToken, getSharedConfigToken } from './tokens.js';

/** The one registry and explorer of an application, whatever modules import HopperModule. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [HopperRegistry, HopperExplorer],
  exports: [HopperRegistry],
})
export class HopperCoreModule {}

const optionalShared = (configKey?: string) => ({ token: getSharedConfigToken(configKey), optional: true });

/** A provider of `token` whose value comes from the async options' factory, class or existing provider. */
function asyncValueProvider<T>(token: string, options: AsyncOptions<T>): Provider[] {
  if (options.useFactory) return [{ provide: token, useFactory: options.useFactory, inject: options.inject ?? [] }];
  const factoryClass = options.useClass ?? options.useExisting;
  if (!factoryClass) throw new TypeError('Async options need useFactory, useClass or useExisting.');
  // Hopper's `createOptions`, or the method names @nestjs/bullmq's factories use.
  const make = (factory: Record<string, unknown>): T | Promise<T> => {
    for (const method of [
      'createOptions',
      'createSharedConfiguration',
      'createRegisterQueueOptions',
      'createRegisterFlowProducerOptions',
    ]) {
      if (typeof factory[method] === 'function') return (factory[method] as () => T | Promise<T>).call(factory);
    }
    throw new TypeError(`${factoryClass.name} has no createOptions() (or createSharedConfiguration / createRegisterQueueOptions) method.`);
  };
  const providers: Provider[] = [{ provide: token, useFactory: make, inject: [factoryClass] }];
  if (options.useClass) providers.push({ provide: options.useClass, useClass: options.useClass });
  return providers;
}

function queueProvider(
  name: string | undefined,
  configKey: string | undefined,
  own: (QueueOptions & Record<string, unknown>) | string,
): Provider {
  // `own` is the queue's options, or the token of a provider that makes them (async registration).
  const ownToken = typeof own === 'string' ? own : undefined;
  return {
    provide: getQueueToken(name),
    useFactory: (registry: HopperRegistry, shared: SharedHopperConfig | undefined, made?: QueueOptions) => {
      const { name: _n, configKey: _k, ...options } = { ...(ownToken ? made : (own as QueueOptions)) } as RegisterQueueOptions;
      return registry.openQueue(name ?? 'default', { ...shared, ...options });
    },
    inject: [HopperRegistry, optionalShared(configKey), ...(ownToken ? [ownToken] : [])],
  };
}

function flowProvider(name: string | undefined, configKey: string | undefined, own: FlowProducerOptions | string): Provider {
  const ownToken = typeof own === 'string' ? own : undefined;
  return {
    provide: getFlowProducerToken(name),
    useFactory: (registry: HopperRegistry, shared: SharedHopperConfig | undefined, made?: FlowProducerOptions) => {
      const {
        name: _n,
        configKey: _k,
        ...options
      } = { ...(ownToken ? made : (own as FlowProducerOptions)) } as RegisterFlowProducerOptions;
      const sharedConnection = shared ? { connection: shared.connection, prefix: shared.prefix } : {};
      return registry.openFlowProducer({ ...sharedConnection, ...options });
    },
    inject: [HopperRegistry, optionalShared(configKey), ...(ownToken ? [ownToken] : [])],
  };
}

@Module({})
export class HopperModule {
  /**
   * The configuration every queue, worker and flow producer shares (`connection`, `prefix`,
   * `defaultJobOptions`, ...). With a `configKey`, a named configuration that registrations
   * choose with their own `configKey`.
   */
  static forRoot(config: SharedHopperConfig): DynamicModule;
  static forRoot(configKey: string, config: SharedHopperConfig): DynamicModule;
  static forRoot(keyOrConfig: string | SharedHopperConfig, maybeConfig?: SharedHopperConfig): DynamicModule {
    const [configKey, config] = typeof keyOrConfig === 'string' ? [keyOrConfig, maybeConfig ?? {}] : [undefined, keyOrConfig];
    const provider: Provider = { provide: getSharedConfigToken(configKey), useValue: config };
    return { global: true, module: HopperModule, imports: [HopperCoreModule], providers: [provider], exports: [provider] };
  }

  /** `forRoot` with options made by a factory (e.g. from a ConfigService). */
  static forRootAsync(options: SharedHopperAsyncConfig): DynamicModule;
  static forRootAsync(configKey: string, options: SharedHopperAsyncConfig): DynamicModule;
  static forRootAsync(keyOrOptions: string | SharedHopperAsyncConfig, maybeOptions?: SharedHopperAsyncConfig): DynamicModule {
    const [configKey, options] = typeof keyOrOptions === 'string' ? [keyOrOptions, maybeOptions ?? {}] : [undefined, keyOrOptions];
    const token = getSharedConfigToken(configKey);
    return {
      global: true,
      module: HopperModule,
      imports: [HopperCoreModule, ...(options.imports ?? [])],
      providers: [...asyncValueProvider(token, options), ...(options.extraProviders ?? [])],
      exports: [token],
    };
  }

  /** Provides a Queue per name (inject it with `@InjectQueue(name)`). */
  static registerQueue(...queues: RegisterQueueOptions[]): DynamicModule {
    const providers = queues.map((q) => queueProvider(q.name, q.configKey, q as QueueOptions & Record<string, unknown>));
    return { module: HopperModule, imports: [HopperCoreModule], providers, exports: providers };
  }

  /** `registerQueue` with options made by a factory. */
  static registerQueueAsync(...queues: RegisterQueueAsyncOptions[]): DynamicModule {
    const providers: Provider[] = [];
    const exported: Provider[] = [];
    for (const q of queues) {
      const optionsToken = `HOPPER_QUEUE_ASYNC_OPTIONS(${q.name ?? 'default'})`;
      providers.push(...asyncValueProvider(optionsToken, q), ...(q.extraProviders ?? []));
      const provider = queueProvider(q.name, q.configKey, optionsToken);
      providers.push(provider);
      exported.push(provider);
    }
    const imports = [HopperCoreModule, ...queues.flatMap((q) => q.imports ?? [])];
    return { module: HopperModule, imports, providers, exports: exported };
  }

  /** Provides a FlowProducer per name (inject it with `@InjectFlowProducer(name)`). */
  static registerFlowProducer(...producers: RegisterFlowProducerOptions[]): DynamicModule {
    const providers = producers.map((p) => flowProvider(p.name, p.configKey, p));
    return { module: HopperModule, imports: [HopperCoreModule], providers, exports: providers };
  }

  /** `registerFlowProducer` with options made by a factory. */
  static registerFlowProducerAsync(...producers: RegisterFlowProducerAsyncOptions[]): DynamicModule {
    const providers: Provider[] = [];
    const exported: Provider[] = [];
    for (const p of producers) {
      const optionsToken = `HOPPER_FLOW_ASYNC_OPTIONS(${p.name ?? 'default'})`;
      providers.push(...asyncValueProvider(optionsToken, p), ...(p.extraProviders ?? []));
      const provider = flowProvider(p.name, p.configKey, optionsToken);
      providers.push(provider);
      exported.push(provider);
    }
    const imports = [HopperCoreModule, ...producers.flatMap((p) => p.imports ?? [])];
    return { module: HopperModule, imports, providers, exports: exported };
  }
}

/** @nestjs/bullmq's name for {@link HopperModule}: migrating is changing the import path. */
export const BullModule = HopperModule;
