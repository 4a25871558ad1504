/** Injection tokens and metadata keys: the names @nestjs/bullmq gives them, so tests written for it keep working. */

/** The configuration key of the default shared config (`forRoot` without a key). */
export const DEFAULT_CONFIG_KEY = 'default';

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
  return configKey ? `BULLMQ_CONFIG(${configKey})` : `BULLMQ_CONFIG(${DEFAULT_CONFIG_KEY})`;
}

/** The token of a queue's registration options (what `registerQueue` was given for it). */
export function getQueueOptionsToken(name: string): string {
  return `HOPPER_QUEUE_OPTIONS(${name})`;
}

export const PROCESSOR_METADATA = 'hopper:processor';
export const WORKER_OPTIONS_METADATA = 'hopper:worker_options';
export const ON_WORKER_EVENT_METADATA = 'hopper:worker_event';
export const QUEUE_EVENTS_LISTENER_METADATA = 'hopper:queue_events_listener';
export const ON_QUEUE_EVENT_METADATA = 'hopper:queue_event';
export const JOB_SCHEDULERS_METADATA = 'hopper:job_schedulers';
