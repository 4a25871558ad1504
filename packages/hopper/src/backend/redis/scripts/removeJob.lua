--[[ removeJob: removes one job, whatever its state except active (a running job's holder
  would lose its work silently: finish, fail or let it stall first), and except a job
  scheduler's pending run (the scheduler would stop for good: remove or pause the scheduler).
  With `children` = '1' (BullMQ's removeChildren, the default of job.remove and queue.remove),
  its flow descendants at every depth go too, in whichever queue of the prefix they are
  (includes/tree): the whole tree is read and checked first, and nothing is written if a job in
  it is active, is a pending run, or the tree holds more than 1,000 child records (bounded work
  per call). A removed job's own parent stops waiting for it (and moves on if it was the last).
  KEYS: meta, wait, prio, delayed, active, completed, failed, events, waitingChildren
  Flags: allow-oom (it frees memory: it must run when Redis is full under maxmemory)
  ARGV: now, base, id, children
  Returns: { code, detail }: 1 removed (detail: how many jobs); 0 no such job; -4 the job is
    active; -5 a scheduler's pending run; -6 a descendant is active (detail: its key); -7 the
    tree is too large (detail: the limit); -8 a descendant is a scheduler's pending run (its key) ]]
--@include base
--@include tree

local jk = jobKey(argv.base, argv.id)
local state = redis.call('HGET', jk, 's')
if not state then return { 0, '' } end
if state == 'active' then return { -4, '' } end
-- A scheduler's pending run (delayed, or ready when due at once) is never removed alone.
if pendingRunOf(argv.base, argv.id) then return { -5, '' } end
local now = nowMs(argv.now)
if argv.children == '1' then
  local nodes, code, detail = readTree(argv.base, argv.id, state)
  if not nodes then return { code, detail } end
  removeTree(k, nodes, now)
  return { 1, #nodes }
end
removeJobFrom(k, argv.base, argv.id, state, now)
emit(k.events, eventsCap(k.meta), 'removed', 'jobId', argv.id, 'prev', state)
return { 1, 1 }
