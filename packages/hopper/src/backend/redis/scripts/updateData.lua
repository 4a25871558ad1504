--[[ updateData: replaces a job's data.
  KEYS: job, data
    The job's hash and large-data key: they route the call to the job's Cluster slot.
  ARGV: base, id, data, token, attempt
    token/attempt: the caller's fence ('' for an unfenced call from a fetched job).
  Returns: 1 done; codes -1 job missing, -2 stale token or attempt (lock lost) ]]
--@include base
--@include fence

local jk = k.job
local code = checkFence(jk, argv.token, argv.attempt)
if code ~= 1 then return code end
-- Data lives inline, in chunks or in its own key by size: clear the old place first.
clearData(argv.base, argv.id, jk)
writeData(argv.base, argv.id, jk, argv.data)
return 1
