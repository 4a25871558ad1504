--[[ fence: checks that a write comes from the attempt that holds the job (DESIGN, promise 3).
  An empty token means an unfenced call (a job fetched with getJob, as in BullMQ).
  Returns 1 when the write may go on, -1 when the job is missing, -2 when the caller's
  (token, attempt) is not the holder's. ]]

local function checkFence(jk, token, attempt)
  local f = redis.call('HMGET', jk, 's', 'tk', 'as')
  if not f[1] then return -1 end
  if token == '' then return 1 end
  if f[2] ~= token or f[3] ~= attempt then return -2 end
  return 1
end
