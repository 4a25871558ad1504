--[[ pending: a job scheduler's pending run. The scheduler keeps one occurrence (field `pid`) as its
  next run: the one waiting for its instant (delayed), or one already ready that no worker has
  taken yet (a new `every` schedule's first run, due at once; an occurrence that fell due and
  whose successor is not planned yet). It is pending while it has never started: once a worker
  takes it, it is an ordinary job, and a retry of it (delayed for its backoff, `as` set) is too.
  Operations that would discard the pending run refuse (remove, cancel: code -5) or skip it
  (drain, clean); upserting a changed spec, pausing or removing the scheduler withdraw it. ]]

-- The states of an occurrence that has not started yet.
local NOT_STARTED = { delayed = true, waiting = true, prioritized = true }

-- Whether occurrence `id` is still waiting for its time (delayed, never started).
local function isWaitingOccurrence(base, id)
  if not id or id == '' then return false end
  local f = redis.call('HMGET', jobKey(base, id), 's', 'as')
  return f[1] == 'delayed' and not f[2]
end

-- The id of the scheduler whose pending run job `id` is, or false.
local function pendingRunOf(base, id)
  local f = redis.call('HMGET', jobKey(base, id), 'sk', 's', 'as')
  if not f[1] or not NOT_STARTED[f[2]] or f[3] then return false end
  if redis.call('HGET', base .. 's:' .. f[1], 'pid') ~= id then return false end
  return f[1]
end

-- Takes scheduler occurrence `id` away if it has not started (delayed, or ready and never taken)
-- and deletes it; a ready one had been counted as fired, which is undone (it never ran, and a
-- backfill may run its instant). A ready one stays while the queue is paused: it was released to
-- the queue (as BullMQ keeps a scheduler's paused job). Needs KEYS delayed, wait, prio, meta,
-- events. Returns whether it was withdrawn.
local function withdrawPending(k, base, id)
  if not id or id == '' then return false end
  local f = redis.call('HMGET', jobKey(base, id), 's', 'as', 'g', 'sk', 'si')
  if not NOT_STARTED[f[1]] or f[2] then return false end
  if f[1] ~= 'delayed' and not isPaused(k.meta) and f[4] then
    local sk = base .. 's:' .. f[4]
    local r = redis.call('HMGET', sk, 'run', 'buf')
    if r[1] == id then redis.call('HSET', sk, 'run', '') end
    if r[2] == id then redis.call('HSET', sk, 'buf', '') end
    if redis.call('EXISTS', sk) == 1 then redis.call('HINCRBY', sk, 'fired', -1) end
    if f[5] then redis.call('ZREM', base .. 'sf:' .. f[4], f[5]) end
  end
  if f[1] == 'delayed' then
    redis.call('ZREM', k.delayed, id)
  elseif isPaused(k.meta) then
    return false
  elseif f[3] then
    groups().unqueueGrouped(base, id, f[3])
  elseif f[1] == 'waiting' then
    redis.call('LREM', k.wait, 1, id)
  else
    redis.call('ZREM', k.prio, id)
  end
  deleteJob(base, id)
  emit(k.events, eventsCap(k.meta), 'removed', 'jobId', id, 'prev', f[1])
  return true
end
