/**
 * hopper-queue-nestjs: the NestJS module for Hopper, a drop-in for @nestjs/bullmq (same names, same
 * tokens). Public exports only.
 */
export { HopperModule, BullModule, HopperCoreModule } from './hopper.module.js';
export { HopperRegistrar, BullRegistrar } from './registrar.js';
export {
  InjectQueue,
  InjectFlowProducer,
  Processor,
  OnWorkerEvent,
  QueueEventsListener,
  OnQueueEvent,
  JobScheduler,
} from './decorators.js';
export { WorkerHost, QueueEventsHost } from './hosts.js';
export { HopperDashboardModule, type HopperDashboardModuleOptions } from './dashboard.module.js';
export { HopperRegistry } from './registry.js';
export {
  getQueueToken,
  getFlowProducerToken,
  getSharedConfigToken,
  getQueueOptionsToken,
  getFlowProducerOptionsToken,
  BULL_CONFIG_DEFAULT_TOKEN,
} from './tokens.js';
export type {
  SharedHopperConfig,
  SharedHopperAsyncConfig,
  HopperModuleExtraOptions,
  RegisterQueueOptions,
  RegisterQueueAsyncOptions,
  RegisterFlowProducerOptions,
  RegisterFlowProducerAsyncOptions,
  ProcessorOptions,
  NestWorkerOptions,
  NestQueueEventsOptions,
  OptionsFactory,
  QueueProcessor,
  QueueProcessorCallback,
  QueueSeparateProcessor,
  QueueAdvancedProcessor,
  QueueAdvancedSeparateProcessor,
  BullRootModuleOptions,
  SharedBullAsyncConfiguration,
  BullModuleExtraOptions,
  BullQueueProcessor,
  BullQueueProcessorCallback,
  BullQueueSeparateProcessor,
  BullQueueAdvancedProcessor,
  BullQueueAdvancedSeparateProcessor,
  NestQueueEventOptions,
  SharedBullConfigurationFactory,
  RegisterQueueOptionsFactory,
  RegisterFlowProducerOptionsFactory,
} from './interfaces.js';
