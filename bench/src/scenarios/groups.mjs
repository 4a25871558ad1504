// groups: fair per-tenant groups (1,000 groups, 100,000 jobs; jobs/s against the same jobs
// without groups). Hopper-only, since BullMQ has no groups outside BullMQ Pro. Skipped until
// Hopper implements groups: a placeholder must not produce numbers.

export default {
  id: 'groups',
  title: 'Groups: 1,000 groups, 100,000 jobs, against the same jobs without groups',
  skip: 'groups: not yet implemented in Hopper',
  metrics: [],
  cases: () => [],
  steps: [],
  roles: {},
};
