// The scenarios, in the order they run and appear in the report.
//
// A scenario module's default export:
//   id             name used by --only
//   title          one line for the report
//   skip           optional: a reason printed instead of running it
//   notApplicable  optional: { [lib]: reason } for libraries the scenario cannot measure (a
//                  feature they lack); those are not run, and their cells read `n/a (reason)`
//   metrics        figures each case reports (see common.mjs `metric`)
//   cases          (quick) => [{ label, params }]: the variants to run, sized for --quick or not
//   steps          [[role, ...], ...]: steps run one after the other; the roles of a step run
//                  at once, each in its own process, and start together once all are ready
//   roles          { [role]: async (ctx) => ({ metrics?, notes?, data? } | undefined) }, run in
//                  the child; `data` (JSON) is for `combine`
//   combine        optional: ({ [role]: data }, params) => ({ metrics?, notes? }), run in the
//                  parent after every step: for figures that need more than one process's
//                  measurements (a time taken in one process against a time taken in another)

import addBulk from './add-bulk.mjs';
import addSingle from './add-single.mjs';
import cancel from './cancel.mjs';
import delayed from './delayed.mjs';
import groups from './groups.mjs';
import latency from './latency.mjs';
import memory from './memory.mjs';
import processing from './process.mjs';
import workers from './workers.mjs';

export const scenarios = [addSingle, addBulk, processing, workers, latency, memory, delayed, cancel, groups];
