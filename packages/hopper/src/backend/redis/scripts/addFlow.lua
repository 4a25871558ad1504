--[[ addFlow: adds trees of jobs across queues atomically: all are written or none. Used by
  FlowProducer (a tree, or a chunk of a large one) and by adds with `opts.parent` (a job joining
  an existing parent). Nodes come in pre-order; a node's parent is an earlier node of the call
  (parentIndex), or for a top-level node an existing job (extQueue/extId) or none.
  A top-level node whose custom id exists is a duplicate: it and its subtree are skipped (so
  adding the same flow twice creates nothing new). Any other existing node refuses the whole call.
  A node with children in the call waits in waiting-children; `sealed` 0 keeps it there even
  with no pending child (its other children come in later calls; sealParent ends that).
  KEYS: meta, requests
    (the first node's queue: they route the call in Redis Cluster)
  ARGV: now, base, queueName, seq, keep, ...nodes
    base/queueName: the first node's queue; other queues' bases are derived from it (one slot).
    nodes: 14 values per node: queue, name, data, opts ('' = none), customId ('' = auto),
      priority, delay, lifo (0/1), timestamp (0 = now), parentIndex (1-based, 0 = top-level),
      extQueue ('' = none), extId, policy ('' | f | c | i | r), sealed (0/1)
    seq/keep: as in addJobs (a re-sent call is applied once).
  Returns: { now, 'ok', id1, flag1, ... } with flag 0 added, 1 duplicate (existing job, nothing
    written), 2 skipped (in a duplicate's subtree); or { now, 'exists', index } when a non-top-level
    node's custom id exists; { now, 'parent', index, state } when a node's existing parent is
    missing or finished; { now, 'maxsize', queueName, group, max, size } when the call would take a
  group past its backlog cap (includes/groups). ]]
--@include base
--@include requests
--@include flow

local now = nowMs(argv.now)
local rootBase, rootName = argv.base, argv.queueName

local previous = previousResult(k.requests, argv.seq)
if previous then return previous end

local N = 14
local count = (#ARGV - REST + 1) / N
local function at(i, field) return ARGV[REST + (i - 1) * N + field] end

-- First pass: decide each node's fate before writing anything.
local bases, fate = {}, {}
for i = 1, count do
  local q = at(i, 0)
  bases[i] = q == rootName and rootBase or siblingBase(rootBase, rootName, q)
  local parentIndex = tonumber(at(i, 9))
  local customId = at(i, 4)
  if parentIndex > 0 and fate[parentIndex] ~= 'new' then
    fate[i] = 'skipped'
  elseif customId ~= '' and redis.call('EXISTS', jobKey(bases[i], customId)) == 1 then
    if parentIndex > 0 then return { now, 'exists', i } end
    fate[i] = 'duplicate'
  else
    fate[i] = 'new'
    local extQueue = at(i, 10)
    if parentIndex == 0 and extQueue ~= '' then
      local pb = extQueue == rootName and rootBase or siblingBase(rootBase, rootName, extQueue)
      local pstate = redis.call('HGET', jobKey(pb, at(i, 11)), 's')
      if not pstate or pstate == 'completed' or pstate == 'failed' then return { now, 'parent', i, pstate or 'missing' } end
    end
  end
end

-- Which new nodes have new children: they wait for them.
local hasChildren = {}
for i = 1, count do
  local parentIndex = tonumber(at(i, 9))
  if fate[i] == 'new' and parentIndex > 0 then hasChildren[parentIndex] = true end
end

-- Groups: the backlog caps of the groups new ready nodes join, per queue, checked before writing.
local groupOf, orders, baseOrder = {}, {}, {}
for i = 1, count do
  if fate[i] == 'new' then
    local g, own = groupOfOpts(at(i, 3))
    if g then
      groupOf[i] = g
      local b = bases[i]
      if not orders[b] then
        orders[b] = {}
        baseOrder[#baseOrder + 1] = b
      end
      if not hasChildren[i] and at(i, 13) == '1' and tonumber(at(i, 6)) == 0 then groups().noteGroupAdd(orders[b], g, own) end
    end
  end
end
for j = 1, #baseOrder do
  local b = baseOrder[j]
  local order = orders[b]
  local capped = #order > 0 and groups().groupCaps(b, order)
  if capped then
    local counts = {}
    for i = 1, count do
      local g = groupOf[i]
      if g and bases[i] == b and capped[g] and not hasChildren[i] and at(i, 13) == '1' and tonumber(at(i, 6)) == 0 then
        counts[g] = (counts[g] or 0) + 1
      end
    end
    local g, max, size = groups().overCap(b, order, capped, counts)
    if g then return { now, 'maxsize', queueNameOf(b), g, max, size } end
  end
end

local result = { now, 'ok' }
local ids = {}
local byQueue = {}
for i = 1, count do
  local b = bases[i]
  local customId = at(i, 4)
  if fate[i] ~= 'new' then
    ids[i] = customId
    result[#result + 1] = customId
    result[#result + 1] = fate[i] == 'duplicate' and 1 or 2
  else
    local id = customId
    if id == '' then id = intStr(redis.call('INCR', b .. 'id')) end
    ids[i] = id
    local jk = jobKey(b, id)
    local name, opts = at(i, 1), at(i, 3)
    local priority, delay = tonumber(at(i, 5)), tonumber(at(i, 6))
    local timestamp = tonumber(at(i, 8))
    if timestamp == 0 then timestamp = now end
    local fields = { 'n', name, 't', timestamp }
    local group = groupOf[i] or false
    if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
    if priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = priority end
    if delay > 0 then fields[#fields + 1] = 'dl'; fields[#fields + 1] = delay end
    -- The parent link: a node of this call, or an existing job.
    local parentIndex = tonumber(at(i, 9))
    local pb, pid
    if parentIndex > 0 then
      pb, pid = bases[parentIndex], ids[parentIndex]
    elseif at(i, 10) ~= '' then
      local extQueue = at(i, 10)
      pb, pid = extQueue == rootName and rootBase or siblingBase(rootBase, rootName, extQueue), at(i, 11)
    end
    if pb then
      fields[#fields + 1] = 'pl'; fields[#fields + 1] = parentLink(pb, pid, at(i, 12))
      redis.call('SADD', depsKey(pb, pid), publicKey(b, id))
      -- `sx`: the parent has keys besides its hash (includes/base removedKeys).
      redis.call('HSET', jobKey(pb, pid), 'sx', '1')
      -- As in BullMQ, the options name the parent (a processor reads job.parent from them).
      if parentIndex > 0 then
        local qualified = publicKey(pb, '')
        local parentJson = cjson.encode({ id = pid, queue = string.sub(qualified, 1, #qualified - 1) })
        if opts == '' then opts = '{"parent":' .. parentJson .. '}' else opts = string.sub(opts, 1, #opts - 1) .. ',"parent":' .. parentJson .. '}' end
      end
    end
    if opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = opts end
    dataFields(b, id, at(i, 2), fields)
    local qk = queueKeysOf(b)
    local state
    if hasChildren[i] or at(i, 13) == '0' then
      state = 'waiting-children'
      if at(i, 13) == '0' then fields[#fields + 1] = 'us'; fields[#fields + 1] = '1' end
      fields[#fields + 1] = 's'; fields[#fields + 1] = state
      chunked('HSET', jk, fields, 2)
      redis.call('ZADD', qk.waitingChildren, now, id)
    elseif delay > 0 then
      fields[#fields + 1] = 's'; fields[#fields + 1] = 'delayed'
      chunked('HSET', jk, fields, 2)
      pushDelayed(qk, jk, id, now + delay)
      state = 'delayed'
    else
      chunked('HSET', jk, fields, 2)
      if at(i, 7) == '1' and priority == 0 and not group then
        redis.call('LPUSH', qk.wait, id)
        redis.call('HSET', jk, 's', 'waiting')
        state = 'waiting'
      else
        -- lifo puts an unprioritized job first (as addJobs; a grouped one first within its priority).
        state = pushReady(qk, jk, id, priority, at(i, 7) == '1' and (priority == 0 or (group ~= nil and group ~= false)), group)
      end
      signalWork(qk.marker)
    end
    local events = byQueue[b]
    if not events then
      events = { ids = {}, names = {}, states = {}, dues = {} }
      byQueue[b] = events
    end
    events.ids[#events.ids + 1] = id
    events.names[#events.names + 1] = name
    events.states[#events.states + 1] = state
    events.dues[#events.dues + 1] = (state == 'delayed') and (now + delay) or 0
    result[#result + 1] = id
    result[#result + 1] = 0
  end
end

for b, events in pairs(byQueue) do
  emitBatch(b .. 'events', eventsCap(b .. 'meta'), 'added', events.ids, 'names', cjson.encode(events.names),
    'states', cjson.encode(events.states), 'delays', cjson.encode(events.dues))
end

recordResult(k.requests, argv.seq, argv.keep, result)
return result
