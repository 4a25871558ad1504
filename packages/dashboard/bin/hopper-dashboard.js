#!/usr/bin/env node
// The standalone dashboard server. Its code is in ../dist (built from ../src by `npm run build`).
import { runStandalone } from '../dist/standalone.js';

try {
  const running = await runStandalone(process.argv.slice(2));
  console.log(`Hopper dashboard on ${running.url} (API: ${running.url}api/queues)`);
  console.log(
    running.token
      ? `Sign in with the token ${running.token} (API: header Authorization: Bearer <token>)`
      : 'Authentication is OFF (--no-auth).',
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void running.stop().then(() => process.exit(0)));
} catch (error) {
  console.error(`hopper-dashboard: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
