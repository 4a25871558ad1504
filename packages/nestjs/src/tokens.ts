/** Injection tokens and metadata keys: the names @nestjs/bullmq gives them, so tests written for it keep working. */

/** The configuration key of the default shared config (`forRoot` without a key). */
export const DEFAULT_CONFIG_KEY = 'default';

/** The token of the default shared configuration (`forRoot(config)`), as @nestjs/bullmq names it. */
export const BULL_CONFIG_DEFAULT_TOKEN = `BULLMQ_CONFIG(${DEFAULT_CONFIG_KEY})`;

/** The token of the module's extra options (`forRoot({ extraOptions })`), as @nestjs/bullmq names it. */
export const BULL_EXTRA_OPTIONS_TOKEN = 'BULLMQ_EXTRA_OPTIONS';

/** The token of the extra options of `forRoot(configKey, { extraOptions })` (the default configuration's: {@link BULL_EXTRA_OPTIONS_TOKEN}). */
export function getExtraOptionsToken(configKey?: string): string {
  return configKey ? `${BULL_EXTRA_OPTIONS_TOKEN}(${configKey})` : BULL_EXTRA_OPTIONS_TOKEN;
}

/** The token of a queue registered with `registerQueue({ name })` (default queue: no name). */
export function getQueueToken(name?: string): string {
  return name ? `BullQueue_${name}` : 'BullQueue_default';
}

/** The token of a flow producer registered with `registerFlowProducer({ name })`. */
export function getFlowProducerToken(name?: string): string {
  return name ? `BullFlowProducer_${name}` : 'BullFlowProducer_default';
}

/** The token of a shared configuration set with `forRoot(configKey, options)`. */
export function getSharedConfigToken(configKey?: string): string {
  return configKey ? `BULLMQ_CONFIG(${configKey})` : BULL_CONFIG_DEFAULT_TOKEN;
}

/** The token of a queue's own registration options (what `registerQueue` or its async factory gave for it). */
export function getQueueOptionsToken(name?: string): string {
  return name ? `BullMQQueueOptions_${name}` : 'BullMQQueueOptions_default';
}

/** The token of a flow producer's own registration options (what `registerFlowProducer` or its async factory gave). */
export function getFlowProducerOptionsToken(name?: string): string {
  return name ? `BullMQFlowProducerOptions_${name}` : 'BullMQFlowProducerOptions_default';
}

export const PROCESSOR_METADATA = 'hopper:processor';
export const WORKER_OPTIONS_METADATA = 'hopper:worker_options';
export const ON_WORKER_EVENT_METADATA = 'hopper:worker_event';
export const QUEUE_EVENTS_LISTENER_METADATA = 'hopper:queue_events_listener';
export const ON_QUEUE_EVENT_METADATA = 'hopper:queue_event';
export const JOB_SCHEDULERS_METADATA = 'hopper:job_schedulers';
