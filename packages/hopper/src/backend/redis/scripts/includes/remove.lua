--[[ remove: takes a job out of whichever structure its state names, releases its
  deduplication key, and deletes its keys. The caller has checked the state. ]]

-- The structure that holds jobs in `state`, and whether it is a list or a sorted set.
local function structureOf(k, state)
  if state == 'waiting' then return k.wait, 'list' end
  if state == 'prioritized' then return k.prio, 'zset' end
  if state == 'delayed' then return k.delayed, 'zset' end
  if state == 'active' then return k.active, 'zset' end
  if state == 'completed' then return k.completed, 'zset' end
  if state == 'failed' then return k.failed, 'zset' end
  return nil, nil
end

-- In simple deduplication mode the key lives until the job finishes or is removed.
local function releaseDedup(base, jk, id)
  local dedupId = redis.call('HGET', jk, 'de')
  if dedupId then
    local dk = base .. 'de:' .. dedupId
    if redis.call('GET', dk) == id then redis.call('DEL', dk) end
  end
end

local function removeJobFrom(k, base, id, state)
  local key, kind = structureOf(k, state)
  if kind == 'list' then
    redis.call('LREM', key, 1, id)
  elseif kind == 'zset' then
    redis.call('ZREM', key, id)
  end
  releaseDedup(base, jobKey(base, id), id)
  deleteJob(base, id)
end
