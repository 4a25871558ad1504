--[[ retention: keeps or removes finished jobs per their spec, trimming the finished set.
  spec: 'k' keep all, 'r' remove now, or 'c<count>a<ageMs>' (either may be -1 for no limit).
  A finisher collects a call's finished jobs and applies them with a few calls for the whole
  batch (one DEL, one ZADD, one trim per distinct spec). Trimming removes at most 2 old jobs per
  finished job, so a call's work stays bounded (DESIGN: retention trims at most twice the number
  of jobs a call finished). A kept job's lock token is set to '' (no holder) in the same HSET
  that records its end, saving a call per job. ]]

local function parseKeep(spec)
  if spec == 'k' then return -1, -1 end
  if spec == 'r' then return 0, -1 end
  local c, a = string.match(spec, '^c(-?%d+)a(-?%d+)$')
  return tonumber(c), tonumber(a)
end

-- The retention spec of a failed job: its own removeOnFail (from its options JSON), else `default`.
local function failKeepOf(opts, default)
  if not opts or opts == '' then return default end
  local ok, decoded = pcall(cjson.decode, opts)
  if not ok or type(decoded) ~= 'table' then return default end
  local spec = decoded.removeOnFail
  if spec == true then return 'r' end
  if spec == false then return 'k' end
  if type(spec) == 'number' then return 'c' .. spec .. 'a-1' end
  if type(spec) == 'table' then
    return 'c' .. (tonumber(spec.count) or -1) .. 'a' .. (spec.age and spec.age * 1000 or -1)
  end
  return default
end

-- `lean`: the queue's layout flags side keys (queueSettings): a job known to have none is
-- deleted with its hash alone (removedKeys), and a trimmed job's `sx` mark is read first.
local function newFinisher(base, setKey, now, lean)
  return { base = base, setKey = setKey, now = now, nowS = intStr(now), dels = {}, kept = {}, specs = {}, n = 0, lean = lean }
end

-- Set by includes/flow when a script includes it: a failed child trimmed away no longer blocks
-- its parent (a removed child), called with (base, id, parent link, now).
local dropFailedChild = nil

-- Removes jobs `ids` from the finished set and deletes their keys, in two calls.
local function dropFinished(fin, ids)
  if #ids == 0 then return end
  if dropFailedChild and fin.setKey == fin.base .. 'failed' then
    for i = 1, #ids do
      local link = redis.call('HGET', jobKey(fin.base, ids[i]), 'pl')
      if link then dropFailedChild(fin.base, ids[i], link, fin.now) end
    end
  end
  chunked('ZREM', fin.setKey, ids)
  local keys = {}
  for i = 1, #ids do
    local sx = nil
    if fin.lean then sx = redis.call('HEXISTS', jobKey(fin.base, ids[i]), 'sx') == 1 end
    removedKeys(fin.base, ids[i], keys, fin.lean, sx)
  end
  chunked('DEL', nil, keys)
end

-- Records that job `id` finished under `spec`, with its final `fields` (a flat field/value list,
-- written now if the job is kept). Returns true if the job is kept. `sx`: the job's side-keys mark
-- as read (true or false), or nil when the caller did not read it (see removedKeys).
local function finish(fin, jk, id, spec, fields, sx)
  fin.n = fin.n + 1
  local count = parseKeep(spec)
  if count == 0 then
    removedKeys(fin.base, id, fin.dels, fin.lean, sx)
    return false
  end
  fields[#fields + 1] = 'tk'
  fields[#fields + 1] = ''
  chunked('HSET', jk, fields, 2)
  fin.kept[#fin.kept + 1] = fin.nowS
  fin.kept[#fin.kept + 1] = id
  if spec ~= 'k' then fin.specs[spec] = true end
  return true
end

-- finish() for a job whose spec is 'r' (removed at once): nothing to build or write now.
local function finishRemoved(fin, id, sx)
  fin.n = fin.n + 1
  removedKeys(fin.base, id, fin.dels, fin.lean, sx)
end

-- Applies the batch: deletions, additions to the finished set, then trimming.
local function flushFinisher(fin)
  if #fin.dels > 0 then chunked('DEL', nil, fin.dels) end
  if #fin.kept == 0 then return end
  chunked('ZADD', fin.setKey, fin.kept, 2)
  local budget = 2 * fin.n
  for spec in pairs(fin.specs) do
    local count, age = parseKeep(spec)
    if count > 0 then
      local excess = redis.call('ZCARD', fin.setKey) - count
      if excess > 0 then dropFinished(fin, redis.call('ZRANGE', fin.setKey, 0, math.min(excess, budget) - 1)) end
    end
    if age >= 0 then
      dropFinished(fin, redis.call('ZRANGEBYSCORE', fin.setKey, '-inf', fin.now - age, 'LIMIT', 0, budget))
    end
  end
end
