/**
 * `HopperRegistrar` (also exported as `BullRegistrar`, @nestjs/bullmq's name): creates the
 * Workers and QueueEvents of the application's `@Processor` and `@QueueEventsListener` classes
 * when the module initialises, unless `forRoot({ extraOptions: { manualRegistration: true } })`,
 * and starts them when the application has bootstrapped.
 */
import { Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { HopperExplorer } from './explorer.js';
import type { HopperModuleExtraOptions } from './interfaces.js';
import { BULL_EXTRA_OPTIONS_TOKEN } from './tokens.js';

@Injectable()
export class HopperRegistrar implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly explorer: HopperExplorer,
    private readonly discovery: DiscoveryService,
  ) {}

  /** Registers the application's processors and listeners, unless registration is manual. */
  onModuleInit(): Promise<void> {
    if (this.manualRegistration()) return Promise.resolve();
    return this.explorer.register();
  }

  /** Starts what was registered: workers run, listeners are positioned, schedulers declared. */
  onApplicationBootstrap(): Promise<void> {
    return this.explorer.start();
  }

  /**
   * Creates the Worker of every `@Processor` class and the QueueEvents of every
   * `@QueueEventsListener` class that has none yet, at once (`this.worker` and `this.queueEvents`
   * are set when it returns). For `manualRegistration: true`; calling it again registers only the
   * providers added since (a lazily loaded module's). Registered before the application has
   * bootstrapped, they start at bootstrap and the promise resolves at once; after, they start now
   * and it resolves when every listener is positioned and every `@JobScheduler` declared (it
   * rejects, and logs, if one could not be). Throws, creating nothing, on a misdeclared provider.
   *
   * @example
   * async onApplicationBootstrap() {
   *   if (await this.leader.isLeader()) await this.registrar.register();
   * }
   */
  register(): Promise<void> {
    return this.explorer.register();
  }

  /** Whether a `forRoot` (any configKey) set `extraOptions.manualRegistration`. */
  private manualRegistration(): boolean {
    return this.discovery.getProviders().some((wrapper) => {
      const { token } = wrapper;
      if (token !== BULL_EXTRA_OPTIONS_TOKEN && !(typeof token === 'string' && token.startsWith(`${BULL_EXTRA_OPTIONS_TOKEN}(`)))
        return false;
      return (wrapper.instance as HopperModuleExtraOptions | undefined)?.manualRegistration === true;
    });
  }
}

/** @nestjs/bullmq's name for {@link HopperRegistrar}: `app.get(BullRegistrar).register()`. */
export const BullRegistrar = HopperRegistrar;
/** @nestjs/bullmq's name for {@link HopperRegistrar} (the type, for injected parameters). */
export type BullRegistrar = HopperRegistrar;
