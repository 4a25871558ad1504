--[[ pauseScheduler: pauses or resumes a job scheduler. Pausing removes its pending occurrence (if
  not started) and keeps its last instant; resuming marks it due, so catch-up planning decides
  what the pause missed (runs within the window per policy, the rest counted as missed).
  KEYS: schedulers, schedDue, delayed, events, meta, wait, prio
  ARGV: now, base, id, paused
  Returns: 1 changed, 0 already so, -1 no such scheduler. ]]
--@include base
--@include pending

local now = nowMs(argv.now)
local base = argv.base
local sk = base .. 's:' .. argv.id
local state = redis.call('HMGET', sk, 'paused', 'pid', 'hash')
if not state[3] then return -1 end
if (state[1] == '1') == (argv.paused == '1') then return 0 end
if argv.paused == '1' then
  local pid = state[2]
  if withdrawPending(k, base, pid) then
    -- Withdrawn before it ran: the schedule resumes from the instant before it.
    local prev = redis.call('HGET', sk, 'prev') or ''
    if prev == '' then redis.call('HDEL', sk, 'last') else redis.call('HSET', sk, 'last', prev) end
  end
  redis.call('HSET', sk, 'paused', '1', 'pid', '', 'hold', '')
  redis.call('ZADD', k.schedulers, '+inf', argv.id)
  emit(k.events, eventsCap(k.meta), 'scheduler-paused', 'schedulerId', argv.id)
else
  redis.call('HSET', sk, 'paused', '0')
  redis.call('ZADD', k.schedDue, now, argv.id)
  emit(k.events, eventsCap(k.meta), 'scheduler-resumed', 'schedulerId', argv.id)
end
return 1
