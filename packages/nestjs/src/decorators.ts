/** The decorators, named and shaped as @nestjs/bullmq's, plus `@JobScheduler`. */
import { Inject, Injectable, SetMetadata } from '@nestjs/common';
import type { JobSchedulerTemplate, RepeatOptions } from 'hopper-queue';
import { invalidOptions } from './errors.js';
import type { DeclaredJobScheduler, NestQueueEventsOptions, NestWorkerOptions, ProcessorOptions } from './interfaces.js';
import {
  JOB_SCHEDULERS_METADATA,
  ON_QUEUE_EVENT_METADATA,
  ON_WORKER_EVENT_METADATA,
  PROCESSOR_METADATA,
  QUEUE_EVENTS_LISTENER_METADATA,
  WORKER_OPTIONS_METADATA,
  getFlowProducerToken,
  getQueueToken,
} from './tokens.js';

/** Injects the Queue registered under `name` (`registerQueue({ name })`). */
export const InjectQueue = (name?: string): ParameterDecorator & PropertyDecorator => Inject(getQueueToken(name));

/** Injects the FlowProducer registered under `name` (`registerFlowProducer({ name })`). */
export const InjectFlowProducer = (name?: string): ParameterDecorator & PropertyDecorator => Inject(getFlowProducerToken(name));

/**
 * Marks a class extending {@link WorkerHost} as the processor of a queue: after the application
 * has bootstrapped, a Worker runs its `process(job, token, signal)` with these worker options
 * (concurrency, limiter, lockDuration, ...); it closes gracefully when the application shuts down.
 * Example (README, "NestJS"): `Processor('emails', { concurrency: 10 })` on
 * `class EmailsProcessor extends WorkerHost { async process(job) { ... } }`.
 */
export function Processor(queueNameOrOptions?: string | ProcessorOptions, workerOptions?: NestWorkerOptions): ClassDecorator {
  const options: ProcessorOptions = typeof queueNameOrOptions === 'string' ? { name: queueNameOrOptions } : (queueNameOrOptions ?? {});
  return (target) => {
    Injectable()(target);
    SetMetadata(PROCESSOR_METADATA, options)(target);
    if (workerOptions) SetMetadata(WORKER_OPTIONS_METADATA, workerOptions)(target);
  };
}

/** Calls the decorated method on a worker event of the processor's Worker (`completed`, `failed`, `progress`, ...). */
export function OnWorkerEvent(event: string): MethodDecorator {
  return SetMetadata(ON_WORKER_EVENT_METADATA, { event });
}

/**
 * Marks a class extending {@link QueueEventsHost} as a listener of the events of a queue, or of
 * several: with an array, one QueueEvents per queue feeds the same handlers, each call getting
 * the queue's name as its last argument (a single-queue listener gets the usual arguments only).
 */
export function QueueEventsListener(queueName: string | string[], options?: NestQueueEventsOptions): ClassDecorator {
  const names = Array.isArray(queueName) ? queueName : [queueName];
  if (names.length === 0 || names.some((n) => typeof n !== 'string' || n === '')) {
    throw invalidOptions('@QueueEventsListener needs a queue name or a non-empty array of queue names.');
  }
  return (target) => {
    Injectable()(target);
    SetMetadata(QUEUE_EVENTS_LISTENER_METADATA, { names, multi: Array.isArray(queueName), options: options ?? {} })(target);
  };
}

/** Calls the decorated method on a queue event (`completed`, `failed`, `waiting`, `progress`, ...). */
export function OnQueueEvent(event: string): MethodDecorator {
  return SetMetadata(ON_QUEUE_EVENT_METADATA, { event });
}

/**
 * Declares a job scheduler of the processor's queue, created or updated when the application
 * bootstraps (`upsertJobScheduler`, idempotent: every replica may declare it). Stack several on
 * one `@Processor` class.
 * Example: `JobScheduler('daily-digest', { pattern: '0 7 * * *', tz: 'Europe/Paris' }, { name: 'digest' })`
 * above `Processor('emails')`.
 */
export function JobScheduler(id: string, repeat: RepeatOptions, template?: JobSchedulerTemplate<unknown>): ClassDecorator {
  if (typeof id !== 'string' || id === '') throw invalidOptions('@JobScheduler needs a non-empty scheduler id.');
  return (target) => {
    const declared = (Reflect.getMetadata(JOB_SCHEDULERS_METADATA, target) as DeclaredJobScheduler[] | undefined) ?? [];
    Reflect.defineMetadata(JOB_SCHEDULERS_METADATA, [...declared, { id, repeat, template }], target);
  };
}
