/**
 * Tenant budgets (docs/budgets.md): a Queue's `budget` option, its validation, and the tenant
 * of a job. The charging itself is atomic with the add, in the backend (addJobs).
 */
import { InvalidOptionsError } from '../job/errors.js';
import { showValue } from '../validation/kit.js';

/**
 * A budget per tenant over a sliding window, in any unit (tokens, cents): an add with a `cost`
 * option is refused with `BudgetExceededError` when the cost would take its tenant's use over
 * `limit` within the last `window` ms. The check and the charge are one atomic step with the add,
 * so producers in many processes cannot overspend together. Jobs without a `cost` are not charged.
 * The limit and window are this Queue's (not stored in Redis): give every producer the same.
 * @example new Queue('llm', { connection, budget: { key: (data) => data.tenantId, limit: 1_000_000, window: 86_400_000 } });
 */
export interface BudgetOptions<DataType = unknown> {
  /** The tenant a job is charged to, from its data: a non-empty string up to 255 characters. */
  key: (data: DataType) => string;
  /** Most a tenant may spend in any `window` ms: a finite number > 0. */
  limit: number;
  /** The sliding window, ms: a positive integer. */
  window: number;
}

/** A tenant's budget as `queue.getBudget` reads it. */
export interface BudgetUse {
  tenant: string;
  /** The costs charged to the tenant in the last `window` ms (estimates, corrected by `job.reportCost`). */
  use: number;
  /** The budget's limit. */
  limit: number;
  /** The budget's window, ms. */
  window: number;
  /** `limit - use`, at least 0. */
  remaining: number;
}

/** Checks a Queue's `budget` option. */
export function validateBudget(budget: unknown): asserts budget is BudgetOptions<never> {
  if (typeof budget !== 'object' || budget === null) {
    throw new InvalidOptionsError(`budget must be { key: (data) => tenant, limit, window }, got ${String(budget)}.`);
  }
  const { key, limit, window } = budget as Record<string, unknown>;
  if (typeof key !== 'function') {
    throw new InvalidOptionsError(`budget.key must be a function of the job's data returning its tenant, got ${typeof key}.`);
  }
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit <= 0) {
    throw new InvalidOptionsError(`budget.limit must be a finite number > 0 (in the unit of the jobs' cost), got ${String(limit)}.`);
  }
  if (typeof window !== 'number' || !Number.isInteger(window) || window <= 0) {
    throw new InvalidOptionsError(`budget.window must be a positive integer of ms, got ${String(window)}.`);
  }
}

/** Checks a tenant name (from budget.key or getBudget). */
export function validateTenant(tenant: unknown, from: string): asserts tenant is string {
  if (typeof tenant !== 'string' || tenant.length === 0 || tenant.length > 255) {
    throw new InvalidOptionsError(`${from} must give a tenant: a non-empty string up to 255 characters, got ${showValue(tenant)}.`);
  }
}

/** The tenant job data is charged to (budget.key(data), checked). */
export function tenantOf<DataType>(budget: BudgetOptions<DataType>, data: DataType): string {
  const tenant = budget.key(data);
  validateTenant(tenant, 'budget.key(data)');
  return tenant;
}
