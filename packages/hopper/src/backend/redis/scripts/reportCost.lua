--[[ reportCost: records what a job cost (`job.reportCost`: tokens, cents, any unit), replacing
  its earlier report (`rc`), and adds the difference to its run's cost when the job is a turn of
  a run (field `ru`, or the run's record exists: turn 0 after its continueWith). Turn 0's cost
  reported before any continueWith stays on the job and seeds the run's cost (continueJob).
  Fenced when called from a processor.
  KEYS: job, run
  ARGV: token, attempt, cost
  Returns: { code, run cost } — code 1 done (run cost '' when the job is in no run), -1 job
    missing, -2 stale token or attempt. ]]
--@include base
--@include fence

local RUN_TTL = 2592000000

local code = checkFence(k.job, argv.token, argv.attempt)
if code ~= 1 then return { code, '' } end
local f = redis.call('HMGET', k.job, 'rc', 'ru')
local cost = tonumber(argv.cost)
local delta = cost - (tonumber(f[1]) or 0)
redis.call('HSET', k.job, 'rc', argv.cost)
if not f[2] and redis.call('EXISTS', k.run) == 0 then return { 1, '' } end
local total = redis.call('HINCRBYFLOAT', k.run, 'c', delta)
redis.call('PEXPIRE', k.run, RUN_TTL)
return { 1, total }
