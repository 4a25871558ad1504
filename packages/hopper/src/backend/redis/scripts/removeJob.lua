--[[ removeJob: removes one job, whatever its state except active (a running job's holder
  would lose its work silently: finish, fail or let it stall first), and except a job
  scheduler's pending run (the scheduler would stop for good: remove or pause the scheduler).
  KEYS: meta, wait, prio, delayed, active, completed, failed, events, waitingChildren
  Flags: allow-oom (it frees memory: it must run when Redis is full under maxmemory)
  ARGV: now, base, id
  Returns: 1 removed; 0 no such job; -4 the job is active; -5 a scheduler's pending run ]]
--@include base
--@include remove
--@include pending

local jk = jobKey(argv.base, argv.id)
local state = redis.call('HGET', jk, 's')
if not state then return 0 end
if state == 'active' then return -4 end
if pendingRunOf(argv.base, argv.id) then return -5 end
removeJobFrom(k, argv.base, argv.id, state, nowMs(argv.now))
emit(k.events, eventsCap(k.meta), 'removed', 'jobId', argv.id, 'prev', state)
return 1
