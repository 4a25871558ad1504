--[[ drain: removes up to `limit` jobs that have not started: waiting and prioritized ones, and
  delayed ones too when asked, except job schedulers' pending runs (includes/pending: the
  schedulers keep firing; a ready one is put back where it was, in front); then grouped ready jobs, walking the groups from `cursor` in name
  order, at most GROUPS_PER_CALL groups per call. Call again with the returned cursor until it
  says done (bounded work per call: `limit` jobs removed, plus the pending runs walked past, at
  most one per scheduler; linear in total: each group is visited about once).
  A parent in this queue that drain releases (its last pending child was drained) is drained
  too when it becomes ready (or delayed, with delayed jobs), and so on up (includes/tree): a
  drained queue does not run a parent without the children just removed, whatever the batch.
  KEYS: meta, wait, prio, delayed, events
  Flags: allow-oom (it frees memory: it must run when Redis is full under maxmemory)
  ARGV: now, base, delayed, limit, cursor
    delayed: 1 to remove delayed jobs as well.
    cursor: '' to start; else the group to resume at (as returned).
  Returns: { removed, visited groups, done (0/1), next cursor } ]]
--@include base
--@include tree

local GROUPS_PER_CALL = 100
local base = argv.base
local now = nowMs(argv.now)
local limit = tonumber(argv.limit)
local removed = 0

local function discard(id)
  discardJob(base, id, now)
  removed = removed + 1
end

-- A parent drain released: ready, or delayed when delayed jobs are drained (not a pending run).
local function takes(id, state)
  if state == 'waiting' or state == 'prioritized' then return true end
  return state == 'delayed' and argv.delayed == '1' and not pendingRunOf(base, id)
end

-- The one place a job is dropped (per job, so a rule about which jobs drain keeps fits here).
local function dropJob(id)
  dropReleasing(k, base, id, discard, takes)
end

-- Ready jobs, front first; schedulers' pending runs are set aside and put back in front, in
-- their order, once the walk is over (at most one per scheduler).
local keptWait, keptPrio = {}, {}
while removed < limit do
  local ids = redis.call('LPOP', k.wait, limit - removed)
  if not ids then break end
  for i = 1, #ids do
    if pendingRunOf(base, ids[i]) then keptWait[#keptWait + 1] = ids[i] else dropJob(ids[i]) end
  end
end
while removed < limit do
  local popped = redis.call('ZPOPMIN', k.prio, limit - removed)
  if #popped == 0 then break end
  for i = 1, #popped, 2 do
    if pendingRunOf(base, popped[i]) then
      keptPrio[#keptPrio + 1] = popped[i + 1]
      keptPrio[#keptPrio + 1] = popped[i]
    else
      dropJob(popped[i])
    end
  end
end
if #keptWait > 0 then
  local reversed = {}
  for i = #keptWait, 1, -1 do reversed[#reversed + 1] = keptWait[i] end
  chunked('LPUSH', k.wait, reversed)
end
if #keptPrio > 0 then chunked('ZADD', k.prio, keptPrio, 2) end
if argv.delayed == '1' then
  -- Earliest first; a scheduler's pending run stays where it is (at the front of what is left),
  -- so each window starts past the ones kept so far.
  local kept = 0
  while removed < limit do
    local window = redis.call('ZRANGE', k.delayed, kept, kept + limit - removed - 1)
    if #window == 0 then break end
    for i = 1, #window do
      local id = window[i]
      if pendingRunOf(base, id) then
        kept = kept + 1
      else
        redis.call('ZREM', k.delayed, id)
        dropJob(id)
      end
    end
  end
end

local function finish(visited, done, cursor)
  if removed > 0 then emit(k.events, eventsCap(k.meta), 'drained-queue', 'count', removed) end
  return { removed, visited, done, cursor }
end

if removed >= limit then return finish(0, 0, argv.cursor) end
if redis.call('HEXISTS', k.meta, 'gm') == 0 then return finish(0, 1, '') end
-- Grouped ready jobs, group by group from the cursor (their groups stay in the ring, idle when
-- next claimed). One group more than visited is read, to know where the next call starts.
local start = '-'
if argv.cursor ~= '' then start = '[' .. argv.cursor end
local known = redis.call('ZRANGEBYLEX', base .. 'gs', start, '+', 'LIMIT', 0, GROUPS_PER_CALL + 1)
local visited = 0
for g = 1, math.min(#known, GROUPS_PER_CALL) do
  visited = visited + 1
  local gq = groups().groupQueueKey(base, known[g])
  local keptGroup = {}
  while removed < limit do
    local popped = redis.call('ZPOPMIN', gq, limit - removed)
    if #popped == 0 then break end
    for i = 1, #popped, 2 do
      if pendingRunOf(base, popped[i]) then
        keptGroup[#keptGroup + 1] = popped[i + 1]
        keptGroup[#keptGroup + 1] = popped[i]
      else
        dropJob(popped[i])
      end
    end
  end
  if #keptGroup > 0 then chunked('ZADD', gq, keptGroup, 2) end
  -- The batch is full: this group may hold more, so the next call starts at it.
  if removed >= limit then return finish(visited, 0, known[g]) end
end
if #known > GROUPS_PER_CALL then return finish(visited, 0, known[GROUPS_PER_CALL + 1]) end
return finish(visited, 1, '')
