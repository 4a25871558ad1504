--[[ upsertScheduler: creates or updates a job scheduler (its validated spec and job template). The
  same spec and template again changes nothing and keeps the pending occurrence; a changed one
  replaces the spec and withdraws the pending occurrence if it has not started (delayed, or ready
  and not taken by a worker: includes/pending), resuming from the instant before it (no
  occurrence is ever created at or before the scheduler's last instant otherwise). The scheduler
  is then marked due, and advanceScheduler creates its next occurrence.
  KEYS: schedulers, schedDue, delayed, events, meta, wait, prio
  ARGV: now, base, id, hash, spec, template, overlap, catchup, catchupWindow, limit, paused, seedLast, seedCreated
    hash: a digest of spec + template, to tell an unchanged upsert.
    seedLast, seedCreated: '' for a plain upsert. A scheduler moved here from another system
      (`hopper migrate`) is created with its last instant (so its next occurrence is the one it
      had planned there, never one at or before it) and the occurrences it had created (what
      `limit` counts). Only when the scheduler is created: an existing one is left as it is.
  Returns: 0 unchanged, 1 created, 2 replaced. ]]
--@include base
--@include pending

local now = nowMs(argv.now)
local base = argv.base
local sk = base .. 's:' .. argv.id
local current = redis.call('HGET', sk, 'hash')
if current == argv.hash then return 0 end
if argv.seedLast ~= '' and redis.call('EXISTS', sk) == 1 then return 0 end
local result = 1
if current then
  result = 2
  local pid = redis.call('HGET', sk, 'pid')
  if withdrawPending(k, base, pid) then
    -- Withdrawn before it ran: the schedule resumes from the instant before it.
    local prev = redis.call('HGET', sk, 'prev') or ''
    if prev == '' then redis.call('HDEL', sk, 'last') else redis.call('HSET', sk, 'last', prev) end
  end
end
redis.call('HSET', sk, 'hash', argv.hash, 'spec', argv.spec, 'tpl', argv.template, 'ov', argv.overlap,
  'cu', argv.catchup, 'cw', argv.catchupWindow, 'limit', argv.limit, 'pid', '', 'hold', '', 'paused', argv.paused)
for _, counter in ipairs({ 'fired', 'skipped', 'missed', 'created' }) do
  redis.call('HSETNX', sk, counter, 0)
end
redis.call('HSETNX', sk, 'createdAt', now)
if argv.seedLast ~= '' then redis.call('HSET', sk, 'last', argv.seedLast, 'created', argv.seedCreated) end
redis.call('ZADD', k.schedulers, 'NX', '+inf', argv.id)
redis.call('ZADD', k.schedDue, now, argv.id)
emit(k.events, eventsCap(k.meta), 'scheduler-upserted', 'schedulerId', argv.id)
return result
