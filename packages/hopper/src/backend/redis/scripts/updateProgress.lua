--[[ updateProgress: stores a job's progress (JSON) and emits a progress event.
  KEYS: meta, events
  ARGV: base, id, progress, token, attempt
    token/attempt: the caller's fence ('' for an unfenced call from a fetched job).
  Returns: 1 done; codes -1 job missing, -2 stale token or attempt (lock lost) ]]
--@include base
--@include fence

local jk = jobKey(argv.base, argv.id)
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return code end
redis.call('HSET', jk, 'pg', argv.progress)
emit(k.events, eventsCap(k.meta), 'progress', 'jobId', argv.id, 'data', argv.progress)
return 1
