--[[ recordStep: stores the outcome of a durable step (`job.step(key, fn)`), fenced to the attempt
  that ran it. A success is stored once and never replaced (the first stored result wins, so a
  step always returns the same value); a failure is stored only until a success replaces it (for
  the dashboard: the step will run again on the next attempt).
  KEYS: job, steps
    The job's hash and steps hash: they route the call to the job's Cluster slot.
  ARGV: base, id, token, attempt, key, record, ok
    record: the JSON record { v?: result, e?: error message, ms: duration, at: time }.
    ok: 1 for a success, 0 for a failure.
  Returns: { code, stored record } — code 1 stored or already stored (the stored success is
    returned), -1 job missing, -2 stale token or attempt (lock lost). ]]
--@include base
--@include fence

local code = checkFence(k.job, argv.token, argv.attempt)
if code ~= 1 then return { code, '' } end
local sk = k.steps
local existing = redis.call('HGET', sk, argv.key)
if existing and string.sub(existing, 1, 5) == '{"v":' then return { 1, existing } end
redis.call('HSET', sk, argv.key, argv.record)
-- `sx`: the job has a key besides its hash (includes/base removedKeys).
redis.call('HSET', k.job, 'sx', '1')
return { 1, argv.record }
