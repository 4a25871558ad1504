/**
 * `HopperModule` (also exported as `BullModule`): @nestjs/bullmq's static methods, providing
 * Hopper's Queue and FlowProducer under @nestjs/bullmq's tokens.
 */
import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { FlowProducerOptions } from 'hopper-queue';
import { invalidOptions } from './errors.js';
import { HopperExplorer } from './explorer.js';
import type {
  AsyncOptions,
  HopperModuleExtraOptions,
  RegisterFlowProducerAsyncOptions,
  RegisterFlowProducerOptions,
  RegisterQueueAsyncOptions,
  RegisterQueueOptions,
  SharedHopperAsyncConfig,
  SharedHopperConfig,
} from './interfaces.js';
import { HopperRegistrar } from './registrar.js';
import { HopperRegistry, inheritedOptions } from './registry.js';
import {
  getExtraOptionsToken,
  getFlowProducerOptionsToken,
  getFlowProducerToken,
  getQueueOptionsToken,
  getQueueToken,
  getSharedConfigToken,
} from './tokens.js';

/** The one registry, explorer and registrar of an application, whatever modules import HopperModule. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [HopperRegistry, HopperExplorer, HopperRegistrar],
  exports: [HopperRegistry, HopperRegistrar],
})
export class HopperCoreModule {}

/** The methods an options class may build its options with: Hopper's, then @nestjs/bullmq's. */
const FACTORY_METHODS = ['createOptions', 'createSharedConfiguration', 'createRegisterQueueOptions', 'createRegisterFlowProducerOptions'];

/** Calls the options class's build method. */
function build<T>(factory: Record<string, unknown>, factoryClass: { name: string }): T | Promise<T> {
  for (const method of FACTORY_METHODS) {
    if (typeof factory[method] === 'function') return (factory[method] as () => T | Promise<T>).call(factory);
  }
  throw invalidOptions(
    `${factoryClass.name} has no createOptions() method (nor createSharedConfiguration, createRegisterQueueOptions or createRegisterFlowProducerOptions).`,
  );
}

/**
 * The providers of `token`, whose value is `merge(shared config, own options)`: the own options
 * are a value (registerQueue), or come from the async options' factory, class or existing
 * provider; async options with none of them take the shared configuration as it is. Without a
 * `sharedToken` (forRootAsync), `merge` gets no shared configuration.
 */
function optionsProviders<T, R>(
  token: string,
  sharedToken: string | undefined,
  own: { value: T } | AsyncOptions<T>,
  merge: (shared: SharedHopperConfig | undefined, own: T | undefined) => R,
): Provider[] {
  const shared = sharedToken === undefined ? [] : [{ token: sharedToken, optional: true }];
  // The shared configuration, when injected, is the factory's first argument.
  const split = (args: unknown[]): [SharedHopperConfig | undefined, unknown[]] =>
    sharedToken === undefined ? [undefined, args] : [args[0] as SharedHopperConfig | undefined, args.slice(1)];
  if ('value' in own) return [{ provide: token, useFactory: (...args: unknown[]) => merge(split(args)[0], own.value), inject: shared }];
  const { useFactory, inject = [] } = own;
  if (useFactory) {
    return [
      {
        provide: token,
        useFactory: async (...args: unknown[]) => {
          const [s, rest] = split(args);
          return merge(s, await useFactory(...(rest as never[])));
        },
        inject: [...shared, ...inject],
      },
    ];
  }
  const factoryClass = own.useClass ?? own.useExisting;
  if (!factoryClass) return [{ provide: token, useFactory: (...args: unknown[]) => merge(split(args)[0], undefined), inject: shared }];
  const providers: Provider[] = [
    {
      provide: token,
      useFactory: async (...args: unknown[]) => {
        const [s, [factory]] = split(args);
        return merge(s, await build<T>(factory as Record<string, unknown>, factoryClass));
      },
      inject: [...shared, factoryClass],
    },
  ];
  if (own.useClass) providers.push({ provide: own.useClass, useClass: own.useClass });
  return providers;
}

/** A queue's options: the shared configuration (less the module's extra options), then its own. */
function queueOptions(shared: SharedHopperConfig | undefined, own: RegisterQueueOptions | undefined): RegisterQueueOptions {
  const { extraOptions: _extra, ...config } = shared ?? {};
  return { ...config, ...own };
}

/** A flow producer's options: where Redis is, the prefix, clock and telemetry of the shared configuration, then its own. */
function flowOptions(shared: SharedHopperConfig | undefined, own: RegisterFlowProducerOptions | undefined): RegisterFlowProducerOptions {
  const fromShared = shared
    ? { ...inheritedOptions(shared), ...(shared.telemetry !== undefined ? { telemetry: shared.telemetry } : {}) }
    : {};
  return { ...fromShared, ...own };
}

function queueProviders(
  name: string | undefined,
  configKey: string | undefined,
  own: { value: RegisterQueueOptions } | AsyncOptions<RegisterQueueOptions>,
): Provider[] {
  const optionsToken = getQueueOptionsToken(name);
  return [
    ...optionsProviders(optionsToken, getSharedConfigToken(configKey), own, queueOptions),
    {
      provide: getQueueToken(name),
      useFactory: (registry: HopperRegistry, options: RegisterQueueOptions) => registry.openQueue(name ?? 'default', options),
      inject: [HopperRegistry, optionsToken],
    },
  ];
}

function flowProviders(
  name: string | undefined,
  configKey: string | undefined,
  own: { value: RegisterFlowProducerOptions } | AsyncOptions<RegisterFlowProducerOptions>,
): Provider[] {
  const optionsToken = getFlowProducerOptionsToken(name);
  return [
    ...optionsProviders(optionsToken, getSharedConfigToken(configKey), own, flowOptions),
    {
      provide: getFlowProducerToken(name),
      useFactory: (registry: HopperRegistry, options: RegisterFlowProducerOptions) => {
        const { name: _name, configKey: _key, forceDisconnectOnShutdown: _force, ...rest } = options;
        // The name stays in `opts.name`, as @nestjs/bullmq keeps it.
        const flowProducerOptions: FlowProducerOptions & { name?: string } = { ...rest, ...(name !== undefined ? { name } : {}) };
        return registry.openFlowProducer(flowProducerOptions);
      },
      inject: [HopperRegistry, optionsToken],
    },
  ];
}

/** The providers a module exports: the queues' and flow producers' own tokens. */
const exported = (providers: Provider[], tokenOf: (name?: string) => string, names: (string | undefined)[]) =>
  providers.filter((p) => names.some((n) => typeof p === 'object' && 'provide' in p && p.provide === tokenOf(n)));

@Module({})
export class HopperModule {
  /**
   * The configuration every queue, worker and flow producer shares (`connection`, `prefix`,
   * `defaultJobOptions`, ...). With a `configKey`, a named configuration that registrations
   * choose with their own `configKey`. `extraOptions: { manualRegistration: true }`: workers and
   * listeners are created only when you call `HopperRegistrar.register()`.
   */
  static forRoot(config: SharedHopperConfig): DynamicModule;
  static forRoot(configKey: string, config: SharedHopperConfig): DynamicModule;
  static forRoot(keyOrConfig: string | SharedHopperConfig, maybeConfig?: SharedHopperConfig): DynamicModule {
    const [configKey, full] = typeof keyOrConfig === 'string' ? [keyOrConfig, maybeConfig ?? {}] : [undefined, keyOrConfig];
    const { extraOptions, ...config } = full;
    const providers: Provider[] = [
      { provide: getSharedConfigToken(configKey), useValue: config },
      { provide: getExtraOptionsToken(configKey), useValue: { ...extraOptions } },
    ];
    return { global: true, module: HopperModule, imports: [HopperCoreModule], providers, exports: providers };
  }

  /** `forRoot` with options made by a factory (e.g. from a ConfigService); `extraOptions` beside the factory. */
  static forRootAsync(options: SharedHopperAsyncConfig): DynamicModule;
  static forRootAsync(configKey: string, options: SharedHopperAsyncConfig): DynamicModule;
  static forRootAsync(keyOrOptions: string | SharedHopperAsyncConfig, maybeOptions?: SharedHopperAsyncConfig): DynamicModule {
    const [configKey, options] = typeof keyOrOptions === 'string' ? [keyOrOptions, maybeOptions ?? {}] : [undefined, keyOrOptions];
    const token = getSharedConfigToken(configKey);
    if (!options.useFactory && !options.useClass && !options.useExisting) {
      throw invalidOptions('forRootAsync needs useFactory, useClass or useExisting (or use forRoot with the configuration itself).');
    }
    const providers: Provider[] = [
      ...optionsProviders(token, undefined, options, (_shared, made: SharedHopperConfig | undefined) => ({ ...made })),
      // Extra options given beside the factory, or (also honoured) in what it returns.
      {
        provide: getExtraOptionsToken(configKey),
        useFactory: (made: SharedHopperConfig): HopperModuleExtraOptions => ({ ...made.extraOptions, ...options.extraOptions }),
        inject: [token],
      },
    ];
    return {
      global: true,
      module: HopperModule,
      imports: [HopperCoreModule, ...(options.imports ?? [])],
      providers: [...providers, ...(options.extraProviders ?? [])],
      exports: [token, getExtraOptionsToken(configKey)],
    };
  }

  /** Provides a Queue per name (inject it with `@InjectQueue(name)`), and the workers of its `processors`. */
  static registerQueue(...queues: RegisterQueueOptions[]): DynamicModule {
    const providers = queues.flatMap((q) => queueProviders(q.name, q.configKey, { value: q }));
    const names = queues.map((q) => q.name);
    return { module: HopperModule, imports: [HopperCoreModule], providers, exports: exported(providers, getQueueToken, names) };
  }

  /**
   * `registerQueue` with options made by a factory (`useFactory`, `useClass`, `useExisting`);
   * with none (`registerQueueAsync({ name })`), the queue takes the `forRoot` configuration.
   */
  static registerQueueAsync(...queues: RegisterQueueAsyncOptions[]): DynamicModule {
    const providers = queues.flatMap((q) => [...queueProviders(q.name, q.configKey, q), ...(q.extraProviders ?? [])]);
    const names = queues.map((q) => q.name);
    const imports = [HopperCoreModule, ...queues.flatMap((q) => q.imports ?? [])];
    return { module: HopperModule, imports, providers, exports: exported(providers, getQueueToken, names) };
  }

  /** Provides a FlowProducer per name (inject it with `@InjectFlowProducer(name)`); its `opts.name` is that name. */
  static registerFlowProducer(...producers: RegisterFlowProducerOptions[]): DynamicModule {
    const providers = producers.flatMap((p) => flowProviders(p.name, p.configKey, { value: p }));
    const names = producers.map((p) => p.name);
    return { module: HopperModule, imports: [HopperCoreModule], providers, exports: exported(providers, getFlowProducerToken, names) };
  }

  /** `registerFlowProducer` with options made by a factory; with none, the `forRoot` configuration's connection and prefix. */
  static registerFlowProducerAsync(...producers: RegisterFlowProducerAsyncOptions[]): DynamicModule {
    const providers = producers.flatMap((p) => [...flowProviders(p.name, p.configKey, p), ...(p.extraProviders ?? [])]);
    const names = producers.map((p) => p.name);
    const imports = [HopperCoreModule, ...producers.flatMap((p) => p.imports ?? [])];
    return { module: HopperModule, imports, providers, exports: exported(providers, getFlowProducerToken, names) };
  }
}

/** @nestjs/bullmq's name for {@link HopperModule}: migrating is changing the import path. */
export const BullModule = HopperModule;
