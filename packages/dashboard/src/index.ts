/**
 * hopper-queue-dashboard: see and operate every Hopper queue over HTTP, secure by default. This
 * package serves a web UI and its HTTP API (JSON, live Server-Sent Events, audit log).
 * Public exports only.
 */
export { createDashboard, type Dashboard, type DashboardOptions } from './dashboard.js';
export { toNodeListener } from './node.js';
export { runStandalone } from './standalone.js';
export { CSRF_HEADER, defaultRedact, type AuthOptions, type Principal, type Redact, type Role } from './security.js';
export { fastifyDashboard } from './fastify.js';
