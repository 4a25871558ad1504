--[[ flow: parents and their children (FlowProducer, dynamic children).
  A parent waits in its queue's `waiting-children` sorted set while it has pending children.
  Its dependency records live beside it, in its queue's slot:
    dp:<id>  set of pending children (their public keys `<prefix>:<queue>:<id>`, as in BullMQ);
    pr:<id>  hash child key -> return value (JSON) of the children that completed;
    fc:<id>  hash child key -> failed reason of the children that failed for good (the parent
             waits for their retry, or failed because of them);
    ig:<id>  the same for the children it let go of (continueParentOnFailure,
             ignoreDependencyOnFailure): BullMQ's "ignored" children.
  A child stores its parent link in one field `pl` = policy .. '\n' .. parent base .. '\n' ..
  parent id (one field, so the hot scripts read one more field, not three; bases and policies
  hold no newline), and its options carry `parent` ({ id, queue }) as in BullMQ. The policy is
  'f' fail the parent, 'c' continue the parent (start it now), 'i' ignore the failure (record it,
  drop the dependency), 'r' remove the dependency, '' none: the parent's queue decides ('fail' when
  its meta has cfp = 'fail', else wait: the parent records the failure and keeps waiting; retrying
  the child unblocks it). A parent added in chunks is unsealed (`us`) until its last child exists:
  it never leaves waiting-children before being sealed.
  Cross-queue writes derive the other queue's keys from its base (mirroring keys.ts); in Redis
  Cluster the queues share a hash tag (the TypeScript side refuses other set-ups). ]]
--@include base
--@include retention
--@include deadletter
--@include counters

-- The keys of the queue whose base is `b` that flow steps touch (names as in keys.ts).
local function queueKeysOf(b)
  return { meta = b .. 'meta', wait = b .. 'wait', prio = b .. 'prio', prioCounter = b .. 'pc', delayed = b .. 'delayed',
    failed = b .. 'failed', events = b .. 'events', marker = b .. 'marker', waitingChildren = b .. 'waiting-children' }
end

-- The queue name in a base: `prefix:{name}:` (untagged prefix) or `prefix:name:` (tagged prefix).
local function queueNameOf(b)
  local tagged = string.match(b, '{([^{}]*)}:$')
  if tagged then return tagged end
  return string.match(b, '([^:]*):$')
end

-- A job's public key, as BullMQ spells it: `<prefix>:<queue>:<id>`.
local function publicKey(b, id)
  if string.sub(b, -2) == '}:' then
    local open = #b - #queueNameOf(b) - 2
    return string.sub(b, 1, open - 1) .. queueNameOf(b) .. ':' .. id
  end
  return b .. id
end

-- A child's parent link: its parent's base and id, and its failure policy ('' for none).
local function parentLink(pb, pid, policy)
  return policy .. '\n' .. pb .. '\n' .. pid
end

-- Whether `link` has the form parentLink writes (policy, base and id on three lines).
local function isParentLink(link)
  local first = string.find(link, '\n', 1, true)
  return first ~= nil and string.find(link, '\n', first + 1, true) ~= nil
end

local function parseLink(link)
  local first = string.find(link, '\n', 1, true)
  local second = string.find(link, '\n', first + 1, true)
  return string.sub(link, first + 1, second - 1), string.sub(link, second + 1), string.sub(link, 1, first - 1)
end

local function depsKey(b, id) return b .. 'dp:' .. id end
local function processedKey(b, id) return b .. 'pr:' .. id end
local function failedChildrenKey(b, id) return b .. 'fc:' .. id end
local function ignoredChildrenKey(b, id) return b .. 'ig:' .. id end

-- Moves parent `pid` (in waiting-children) on: delayed by its own delay, else ready.
local function moveParentOn(pb, pid, pjk, now)
  local pk = queueKeysOf(pb)
  local f = redis.call('HMGET', pjk, 'p', 'dl')
  redis.call('ZREM', pk.waitingChildren, pid)
  redis.call('HDEL', pjk, 'cf')
  local cap = eventsCap(pk.meta)
  local delay = tonumber(f[2]) or 0
  if delay > 0 then
    pushDelayed(pk, pjk, pid, now + delay)
    emit(pk.events, cap, 'delayed', 'jobId', pid, 'delay', now + delay, 'prev', 'waiting-children')
  else
    local state = pushReady(pk, pjk, pid, tonumber(f[1]) or 0, false)
    signalWork(pk.marker)
    emit(pk.events, cap, 'waiting', 'jobId', pid, 'prev', 'waiting-children', 'state', state)
  end
end

-- Releases a sealed parent in waiting-children once nothing blocks it: no pending child, or a
-- child with continueParentOnFailure failed (`cf`).
local function releaseParent(pb, pid, now)
  local pjk = jobKey(pb, pid)
  local f = redis.call('HMGET', pjk, 's', 'us', 'cf')
  if f[1] ~= 'waiting-children' or f[2] then return end
  if f[3] or redis.call('SCARD', depsKey(pb, pid)) == 0 then moveParentOn(pb, pid, pjk, now) end
end

-- A child completed with return value `rv` (JSON): record it, and release the parent if it was the last.
local function childCompleted(b, id, pb, pid, rv, now)
  local ck = publicKey(b, id)
  if redis.call('SREM', depsKey(pb, pid), ck) == 0 then return end
  redis.call('HSET', processedKey(pb, pid), ck, rv)
  redis.call('HDEL', failedChildrenKey(pb, pid), ck)
  releaseParent(pb, pid, now)
end

-- A child was removed (explicitly, by clean or drain): it no longer blocks its parent.
local function childRemoved(b, id, pb, pid, now)
  local ck = publicKey(b, id)
  if redis.call('SREM', depsKey(pb, pid), ck) == 0 then return end
  redis.call('HDEL', failedChildrenKey(pb, pid), ck)
  releaseParent(pb, pid, now)
end

dropFailedChild = function(b, id, link, now)
  if not isParentLink(link) then return end
  local pb, pid = parseLink(link)
  childRemoved(b, id, pb, pid, now)
end

local POLICY_NAMES = { f = 'failParentOnFailure', c = 'continueParentOnFailure', i = 'ignoreDependencyOnFailure',
  r = 'removeDependencyOnFailure', w = 'wait' }

local childFailed

-- Fails parent `pid` because a child failed with failParentOnFailure. A parent that has not
-- reached waiting-children yet (dynamic children) is marked (`ff`): its moveToWaitingChildren fails it.
local function failParent(pb, pid, pjk, reason, now, depth)
  local f = redis.call('HMGET', pjk, 's', 'o', 'am', 'pl', 'de', 'n')
  if f[1] == 'completed' or f[1] == 'failed' or not f[1] then return end
  if f[1] ~= 'waiting-children' then
    redis.call('HSET', pjk, 'ff', reason)
    return
  end
  local pk = queueKeysOf(pb)
  redis.call('ZREM', pk.waitingChildren, pid)
  redis.call('HDEL', pjk, 'us', 'cf')
  if f[5] then releaseDedup(pb, pjk, pid, now) end
  local made = tonumber(f[3]) or 0
  local pname = queueNameOf(pb)
  if deadLetter(pb, pname, pid, pjk, now, made, reason) then countOutcome('dead-lettered', f[6], 1, pb) end
  countOutcome('failed', f[6], 1, pb)
  -- Recorded before finishing (which may delete the parent, and its own parent link with it).
  local grand = f[4]
  local fin = newFinisher(pb, pk.failed, now)
  local kept = finish(fin, pjk, pid, failKeepOf(f[2], 'k'), { 's', 'failed', 'fo', now, 'fr', reason, 'am', made })
  flushFinisher(fin)
  emit(pk.events, eventsCap(pk.meta), 'failed', 'jobId', pid, 'failedReason', reason, 'prev', 'waiting-children',
    'attemptsMade', made)
  if grand and depth < 64 then
    local gb, gid, gpolicy = parseLink(grand)
    childFailed(pb, pid, gb, gid, gpolicy, reason, now, depth + 1, not kept)
  end
end

-- Child `id` of queue base `b` failed for good with `reason`; `policy` is its failure option.
-- `gone`: the child is deleted at once (removeOnFail), so no retry can unblock a waiting parent.
childFailed = function(b, id, pb, pid, policy, reason, now, depth, gone)
  local ck = publicKey(b, id)
  local dk = depsKey(pb, pid)
  if redis.call('SISMEMBER', dk, ck) == 0 then return end
  local pk = queueKeysOf(pb)
  if policy == '' then
    policy = 'w'
    if redis.call('HGET', pk.meta, 'cfp') == 'fail' then policy = 'f' end
  end
  emit(pk.events, eventsCap(pk.meta), 'child-failed', 'jobId', pid, 'childKey', ck, 'failedReason', reason,
    'policy', POLICY_NAMES[policy] or policy)
  if policy == 'w' and gone then
    -- Like a removed child (as in BullMQ), it no longer blocks its parent.
    redis.call('SREM', dk, ck)
    redis.call('HDEL', failedChildrenKey(pb, pid), ck)
    releaseParent(pb, pid, now)
    return
  end
  if policy == 'c' or policy == 'i' then
    redis.call('HSET', ignoredChildrenKey(pb, pid), ck, reason)
  elseif policy ~= 'r' then
    redis.call('HSET', failedChildrenKey(pb, pid), ck, reason)
  end
  if policy == 'w' then return end
  local pjk = jobKey(pb, pid)
  if policy == 'f' then
    failParent(pb, pid, pjk, 'child ' .. ck .. ' failed: ' .. reason, now, depth)
    return
  end
  redis.call('SREM', dk, ck)
  if policy == 'c' then redis.call('HSET', pjk, 'cf', '1') end
  releaseParent(pb, pid, now)
end

-- For the scripts that end a job for good: applies its parent's side, given the job's parent
-- link (its `pl` field; false or nil when it has no parent). `outcome` is 'completed' (value =
-- return value) or 'failed' (value = reason); `gone`: a failed child deleted at once (not kept).
local function notifyParent(b, id, link, outcome, value, now, gone)
  if not link then return end
  local pb, pid, policy = parseLink(link)
  if outcome == 'completed' then
    childCompleted(b, id, pb, pid, value, now)
  else
    childFailed(b, id, pb, pid, policy, value, now, 0, gone)
  end
end
