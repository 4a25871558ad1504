--[[ tree: a job with its descendants (its flow children at every depth, in any queue of the
  prefix), for removing a parent with its children (BullMQ's `removeChildren`, the default), and
  the same-queue parents that drain and clean release and then take as well.
  A parent's children are the keys in its dependency records: dp (pending), pr (completed), fc
  (failed) and ig (failures let go of). A child belongs to the tree only while its parent link
  (`pl`) still names that parent: a child let go of (removeChildDependency), or an id reused by
  an unrelated job, is not. Children in other queues are reached through their bases, as every
  flow step does (in Redis Cluster a flow's queues share a hash tag, see includes/flow). ]]
--@include remove
--@include pending

-- Most child records (at every level) a tree removed in one call may hold: the call reads and
-- deletes each of them, so this bounds its time (about as long as adding a flow of that size).
local TREE_MAX = 1000

-- The key prefix of queue base `b` and whether it holds a hash tag (see keys.ts: `prefix:{name}:`
-- for a plain prefix, `prefix:name:` for a tagged one).
local function prefixOf(b)
  local name = queueNameOf(b)
  if string.sub(b, -2) == '}:' then return string.sub(b, 1, #b - #name - 4), false end
  return string.sub(b, 1, #b - #name - 2), true
end

-- The base and id of the job whose public key is `key` (`<prefix>:<queue>:<id>`; queue names
-- hold no ':'), or nil when it is not under `prefix`.
local function jobOfKey(prefix, tagged, key)
  local head = prefix .. ':'
  if string.sub(key, 1, #head) ~= head then return nil end
  local rest = string.sub(key, #head + 1)
  local colon = string.find(rest, ':', 1, true)
  if not colon or colon == 1 or colon == #rest then return nil end
  local queue, id = string.sub(rest, 1, colon - 1), string.sub(rest, colon + 1)
  if tagged then return prefix .. ':' .. queue .. ':', id end
  return prefix .. ':{' .. queue .. '}:', id
end

-- Reads the tree under job `id` of base `b` (in `state`), breadth-first, writing nothing.
-- Returns its nodes ({ b, id, state, key }, the job first, every parent before its children),
-- or nil, code, detail: -6 a descendant is active (detail: its key), -7 more than TREE_MAX child
-- records, -8 a descendant is a job scheduler's pending run (detail: its key).
local function readTree(b, id, state)
  local prefix, tagged = prefixOf(b)
  local nodes = { { b = b, id = id, state = state } }
  local seen = { [publicKey(b, id)] = true }
  local records = 0
  local i = 1
  while i <= #nodes do
    local n = nodes[i]
    local dp, pr, fc, ig = depsKey(n.b, n.id), processedKey(n.b, n.id), failedChildrenKey(n.b, n.id),
      ignoredChildrenKey(n.b, n.id)
    -- Counted before anything is read, so a huge record is never loaded.
    records = records + redis.call('SCARD', dp) + redis.call('HLEN', pr) + redis.call('HLEN', fc) + redis.call('HLEN', ig)
    if records > TREE_MAX then return nil, -7, tostring(TREE_MAX) end
    local lists = { redis.call('SMEMBERS', dp), redis.call('HKEYS', pr), redis.call('HKEYS', fc), redis.call('HKEYS', ig) }
    for l = 1, #lists do
      local keys = lists[l]
      for c = 1, #keys do
        local ck = keys[c]
        if not seen[ck] then
          seen[ck] = true
          local cb, cid = jobOfKey(prefix, tagged, ck)
          if cb then
            local f = redis.call('HMGET', jobKey(cb, cid), 's', 'pl')
            if f[1] and f[2] and isParentLink(f[2]) then
              local pb, pid = parseLink(f[2])
              if pb == n.b and pid == n.id then
                if f[1] == 'active' then return nil, -6, ck end
                if f[1] == 'delayed' and pendingRunOf(cb, cid) then return nil, -8, ck end
                nodes[#nodes + 1] = { b = cb, id = cid, state = f[1] }
              end
            end
          end
        end
      end
    end
    i = i + 1
  end
  return nodes
end

-- Removes the nodes readTree returned (`k`: the first node's queue keys). The job itself is
-- removed as any job is (its own parent lets go of it); its descendants go without telling
-- their parents, which go too. A `removed` event per job, in its own queue.
local function removeTree(k, nodes, now)
  local root = nodes[1]
  removeJobFrom(k, root.b, root.id, root.state, now)
  emit(k.events, eventsCap(k.meta), 'removed', 'jobId', root.id, 'prev', root.state)
  local queues = {}
  for i = 2, #nodes do
    local n = nodes[i]
    local q = queues[n.b]
    if not q then
      q = queueKeysOf(n.b)
      q.completed, q.active = n.b .. 'completed', n.b .. 'active'
      q.cap = eventsCap(q.meta)
      queues[n.b] = q
    end
    unlinkJob(q, n.b, n.id, n.state)
    redis.call('HDEL', jobKey(n.b, n.id), 'pl')
    discardJob(n.b, n.id, now)
    emit(q.events, q.cap, 'removed', 'jobId', n.id, 'prev', n.state)
  end
end

-- For drain and clean, which empty a queue: drops job `id` of base `base` (already out of its
-- structure) with `drop(id)`; when that released its parent in the same queue (its last pending
-- child went) into a state `takes(parentId, state)` accepts, takes the parent out and drops it
-- too, and so on up (at most 64 levels). Otherwise the emptied queue would run that parent
-- without the children just removed. A parent elsewhere is released, as by any removal.
local function dropReleasing(k, base, id, drop, takes)
  for _ = 1, 64 do
    local link = redis.call('HGET', jobKey(base, id), 'pl')
    local pid, before
    if link and isParentLink(link) then
      local pb, p = parseLink(link)
      if pb == base then
        pid = p
        before = redis.call('HGET', jobKey(base, pid), 's')
      end
    end
    drop(id)
    if before ~= 'waiting-children' then return end
    local after = redis.call('HGET', jobKey(base, pid), 's')
    if not after or after == 'waiting-children' or not takes(pid, after) then return end
    if after == 'waiting' and not redis.call('HGET', jobKey(base, pid), 'g') then
      -- Released to the tail of the waiting list: found from there at once, however long it is.
      redis.call('LREM', k.wait, -1, pid)
    else
      unlinkJob(k, base, pid, after)
    end
    id = pid
  end
end
