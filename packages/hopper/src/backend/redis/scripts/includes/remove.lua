--[[ remove: takes a job out of whichever structure its state names, releases its
  deduplication key, detaches it from its parent (a removed child no longer blocks it), and
  deletes its keys. The caller has checked the state. ]]
--@include flow

-- The structure that holds jobs in `state`, and whether it is a list or a sorted set.
local function structureOf(k, state)
  if state == 'waiting' then return k.wait, 'list' end
  if state == 'prioritized' then return k.prio, 'zset' end
  if state == 'delayed' then return k.delayed, 'zset' end
  if state == 'active' then return k.active, 'zset' end
  if state == 'completed' then return k.completed, 'zset' end
  if state == 'failed' then return k.failed, 'zset' end
  if state == 'waiting-children' then return k.waitingChildren, 'zset' end
  return nil, nil
end

-- Deletes a job already taken out of its state structure: releases its deduplication key and
-- detaches it from its parent first.
local function discardJob(base, id, now)
  local jk = jobKey(base, id)
  -- `de`: its deduplication id in simple mode, `dt` with a ttl (removal frees it too, as in BullMQ).
  local f = redis.call('HMGET', jk, 'de', 'pl', 'dt')
  local dedupId = f[1] or f[3]
  if dedupId then
    local dk = base .. 'de:' .. dedupId
    if redis.call('GET', dk) == id then redis.call('DEL', dk, base .. 'dn:' .. dedupId) end
  end
  if f[2] then
    local pb, pid = parseLink(f[2])
    childRemoved(base, id, pb, pid, now)
  end
  deleteJob(base, id)
end

-- Takes job `id` out of the structure its state names (a grouped ready job: its group's queue).
local function unlinkJob(k, base, id, state)
  if state == 'waiting' or state == 'prioritized' then
    local g = redis.call('HGET', jobKey(base, id), 'g')
    if g then
      groups().unqueueGrouped(base, id, g)
      return
    end
  end
  local key, kind = structureOf(k, state)
  if kind == 'list' then
    redis.call('LREM', key, 1, id)
  elseif kind == 'zset' then
    redis.call('ZREM', key, id)
  end
end

local function removeJobFrom(k, base, id, state, now)
  unlinkJob(k, base, id, state)
  discardJob(base, id, now)
end
