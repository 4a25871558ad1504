/**
 * hopper-queue-dashboard: see and operate every Hopper queue over HTTP, secure by default. This
 * package serves a web UI and its HTTP API (JSON, live Server-Sent Events, audit log).
 * Public exports only.
 */
export { createDashboard, type Dashboard, type DashboardOptions } from './dashboard.js';
export type { ConnectionInfo } from './dispatch.js';
export { toNodeListener } from './node.js';
export { runStandalone } from './standalone.js';
export { CSRF_HEADER, type AuthOptions, type Principal, type Role } from './security.js';
export {
  MAX_REDACT_DEPTH,
  REDACTED,
  SECRET_NAMES,
  defaultRedact,
  defaultRedactText,
  redactUrlPasswords,
  type Redact,
  type RedactText,
  type TextField,
} from './redaction.js';
export { DEFAULT_LIMITS, type DashboardLimits } from './limits.js';
export { LOOPBACK_HOSTS, type TrustProxy } from './guard.js';
export type { ErrorHook } from './errors.js';
export type { DashboardAuditEntry } from './audit.js';
export { fastifyDashboard } from './fastify.js';
