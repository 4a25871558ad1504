/**
 * Hopper's typed errors: the base of them all. The error codes, the brand that makes
 * `instanceof` work across copies of Hopper, the base class {@link HopperError} and the helper
 * that makes a subclass with a fixed code. The error classes themselves are in the errors-*.ts
 * modules by area, and job/errors.ts re-exports them (import from there).
 *
 * Every error Hopper throws on purpose carries a brand (`Symbol.for('hopper.error')` set to its
 * code), and `instanceof` checks the brand as well as the prototype chain. An app that loads
 * Hopper twice (an ESM and a CommonJS copy, say) still recognises errors made by the other copy.
 */

/** The brand's key: every Hopper error carries its code under it (module-internal, not exported by the package). */
export const BRAND = Symbol.for('hopper.error');

/** Every error code Hopper uses, one per error class. */
export const ErrorCode = {
  InvalidOptions: 'ERR_HOPPER_INVALID_OPTIONS',
  InvalidData: 'ERR_HOPPER_INVALID_DATA',
  InvalidName: 'ERR_HOPPER_INVALID_NAME',
  InvalidJobId: 'ERR_HOPPER_INVALID_JOB_ID',
  InvalidSchedule: 'ERR_HOPPER_INVALID_SCHEDULE',
  LockLost: 'ERR_HOPPER_LOCK_LOST',
  Closed: 'ERR_HOPPER_CLOSED',
  CloseTimeout: 'ERR_HOPPER_CLOSE_TIMEOUT',
  Connection: 'ERR_HOPPER_CONNECTION',
  ConnectionTimeout: 'ERR_HOPPER_CONNECTION_TIMEOUT',
  LibraryConflict: 'ERR_HOPPER_LIBRARY_CONFLICT',
  DatabaseLost: 'ERR_HOPPER_DATABASE_LOST',
  Unrecoverable: 'ERR_HOPPER_UNRECOVERABLE',
  UnsupportedRedis: 'ERR_HOPPER_UNSUPPORTED_REDIS',
  CrossSlot: 'ERR_HOPPER_CROSS_SLOT',
  Script: 'ERR_HOPPER_SCRIPT',
  JobNotFound: 'ERR_HOPPER_JOB_NOT_FOUND',
  QueueNotFound: 'ERR_HOPPER_QUEUE_NOT_FOUND',
  UnknownBackoff: 'ERR_HOPPER_UNKNOWN_BACKOFF',
  WaitTimeout: 'ERR_HOPPER_WAIT_TIMEOUT',
  DatasetReset: 'ERR_HOPPER_DATASET_RESET',
  JobActive: 'ERR_HOPPER_JOB_ACTIVE',
  InvalidState: 'ERR_HOPPER_INVALID_STATE',
  Delayed: 'ERR_HOPPER_DELAYED',
  Waiting: 'ERR_HOPPER_WAITING',
  WaitingChildren: 'ERR_HOPPER_WAITING_CHILDREN',
  RateLimited: 'ERR_HOPPER_RATE_LIMITED',
  Cancelled: 'ERR_HOPPER_CANCELLED',
  Timeout: 'ERR_HOPPER_TIMEOUT',
  ReplayRefused: 'ERR_HOPPER_REPLAY_REFUSED',
  FlowConflict: 'ERR_HOPPER_FLOW_CONFLICT',
  FlowTooLarge: 'ERR_HOPPER_FLOW_TOO_LARGE',
  GroupMaxSizeExceeded: 'ERR_HOPPER_GROUP_MAX_SIZE_EXCEEDED',
  BudgetExceeded: 'ERR_HOPPER_BUDGET_EXCEEDED',
  CostAboveRateLimit: 'ERR_HOPPER_COST_ABOVE_RATE_LIMIT',
  UnsupportedOption: 'ERR_HOPPER_UNSUPPORTED_OPTION',
  SchedulerJob: 'ERR_HOPPER_SCHEDULER_JOB',
  RedisFull: 'ERR_HOPPER_REDIS_FULL',
  BackendUnsupported: 'ERR_HOPPER_BACKEND_UNSUPPORTED',
  BackendDriverMissing: 'ERR_HOPPER_BACKEND_DRIVER_MISSING',
  Migration: 'ERR_HOPPER_MIGRATION',
  Backend: 'ERR_HOPPER_BACKEND',
} as const;

/** One of the codes in {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

type Branded = { [BRAND]?: string };

/** Reads the brand of any value: the Hopper error code it carries, if any. */
export function hopperErrorCode(value: unknown): ErrorCode | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as Branded)[BRAND];
  return typeof code === 'string' ? (code as ErrorCode) : undefined;
}

/**
 * Base class of every error Hopper throws on purpose. `code` tells which one it is;
 * `instanceof HopperError` is true for errors from any loaded copy of Hopper.
 */
export class HopperError extends Error {
  /** The stable machine-readable code of this error. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    Object.defineProperty(this, BRAND, { value: code, enumerable: false });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const code = hopperErrorCode(value);
    if (code === undefined) return false;
    if (this === HopperError) return true;
    const own = (this as unknown as { brandCode?: ErrorCode }).brandCode;
    return own !== undefined && own === code;
  }
}

/**
 * What {@link branded} returns: a HopperError subclass with a fixed code. Declared (rather than
 * inferred) so that the published types say the error classes extend HopperError, hence Error:
 * an inferred anonymous class is written into the .d.ts as a bare object type, and
 * typescript-eslint's only-throw-error then refused `throw new UnrecoverableError()` in users' code.
 */
export interface BrandedErrorClass {
  new (message: string, options?: { cause?: unknown }): HopperError;
  readonly prototype: HopperError;
  /** The code this class answers to in `instanceof`. */
  readonly brandCode: ErrorCode;
  [Symbol.hasInstance](value: unknown): boolean;
}

/** Declares the brand code a subclass answers to in `instanceof` across module copies. */
export function branded<C extends ErrorCode>(code: C): BrandedErrorClass {
  return class extends HopperError {
    static readonly brandCode: ErrorCode = code;
    constructor(message: string, options?: { cause?: unknown }) {
      super(code, message, options);
    }
  };
}
