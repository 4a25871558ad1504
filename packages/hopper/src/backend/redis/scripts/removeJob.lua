--[[ removeJob: removes one job, whatever its state except active (a running job's holder
  would lose its work silently: finish, fail or let it stall first).
  KEYS: meta, wait, prio, delayed, active, completed, failed, events, waitingChildren
  ARGV: now, base, id
  Returns: 1 removed; 0 no such job; -4 the job is active ]]
--@include base
--@include remove

local jk = jobKey(argv.base, argv.id)
local state = redis.call('HGET', jk, 's')
if not state then return 0 end
if state == 'active' then return -4 end
removeJobFrom(k, argv.base, argv.id, state, nowMs(argv.now))
emit(k.events, eventsCap(k.meta), 'removed', 'jobId', argv.id, 'prev', state)
return 1
