--[[ reportCost: records what a job cost (`job.reportCost`: tokens, cents, any unit), replacing
  its earlier report (`rc`), and adds the difference to its run's cost when the job is a turn of
  a run (field `ru`, or the run's record exists: turn 0 after its continueWith). Turn 0's cost
  reported before any continueWith stays on the job and seeds the run's cost (continueJob).
  Fenced when called from a processor.
  A job charged to a tenant's budget at add (`bt` tenant, `bc` charged cost; includes/window)
  has its charge replaced by the reported cost, at the same place in the window (its add time),
  while the charge is still in the window; once it left the window there is nothing to correct.
  KEYS: job, run
  ARGV: base, id, token, attempt, cost
  Returns: { code, run cost } — code 1 done (run cost '' when the job is in no run), -1 job
    missing, -2 stale token or attempt. ]]
--@include base
--@include fence
--@include window

local RUN_TTL = 2592000000

local code = checkFence(k.job, argv.token, argv.attempt)
if code ~= 1 then return { code, '' } end
local f = redis.call('HMGET', k.job, 'rc', 'ru', 'bt', 'bc')
local cost = tonumber(argv.cost)
local delta = cost - (tonumber(f[1]) or 0)
local charged = nil
if f[3] then
  local zkey = argv.base .. 'bu:' .. f[3]
  local old = argv.id .. ':' .. f[4]
  local at = redis.call('ZSCORE', zkey, old)
  if at then charged = { zkey, argv.base .. 'bs:' .. f[3], old, at, tonumber(f[4]) } end
end
redis.call('HSET', k.job, 'rc', argv.cost)
if charged then
  -- The entry's member and `bc` hold the same string (weightStr), so the next report finds it.
  local cs = weightStr(cost)
  redis.call('ZREM', charged[1], charged[3])
  redis.call('ZADD', charged[1], charged[4], argv.id .. ':' .. cs)
  redis.call('INCRBYFLOAT', charged[2], weightStr(cost - charged[5]))
  redis.call('HSET', k.job, 'bc', cs)
end
if not f[2] and redis.call('EXISTS', k.run) == 0 then return { 1, '' } end
local total = redis.call('HINCRBYFLOAT', k.run, 'c', delta)
redis.call('PEXPIRE', k.run, RUN_TTL)
return { 1, total }
