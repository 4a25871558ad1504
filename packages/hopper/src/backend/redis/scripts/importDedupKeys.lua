--[[ importDedupKeys: writes deduplication ids held elsewhere (`hopper migrate`: BullMQ's keys
  with a ttl, whose job may have finished there), so an add with one of them is deduplicated
  here, onto the job id it names, until the ttl ends (as addJobs does for any live key, whether
  or not that job still exists). An id already held here keeps its holder; held by the same job,
  its ttl is lengthened to the one given (never shortened; a key without ttl is left as it is).
  KEYS: meta
    (routes the call to the queue's Cluster slot; the keys are derived from base)
  ARGV: base, ...entries
    entries: 3 values each: deduplication id, job id, ttl ms (> 0).
  Returns: { written, lengthened, keptHere }: ids written, ids whose ttl was lengthened, ids
    another job holds here (left alone).
  Codes: none; the caller validates and bounds the batch. ]]

local base = argv.base
-- Read phase: what each entry finds.
local plan = {}
for i = REST, #ARGV, 3 do
  local dk = base .. 'de:' .. ARGV[i]
  local jobId, ttl = ARGV[i + 1], tonumber(ARGV[i + 2])
  local holder = redis.call('GET', dk)
  local action = 'keep'
  if not holder then
    action = 'write'
  elseif holder == jobId then
    local pttl = redis.call('PTTL', dk)
    if pttl >= 0 and pttl < ttl then action = 'lengthen' else action = 'same' end
  end
  plan[#plan + 1] = { dk = dk, jobId = jobId, ttl = ARGV[i + 2], action = action }
end
local written, lengthened, kept = 0, 0, 0
for _, p in ipairs(plan) do
  if p.action == 'write' then
    redis.call('SET', p.dk, p.jobId, 'PX', p.ttl)
    written = written + 1
  elseif p.action == 'lengthen' then
    redis.call('PEXPIRE', p.dk, p.ttl)
    lengthened = lengthened + 1
  elseif p.action == 'keep' then
    kept = kept + 1
  end
end
return { written, lengthened, kept }
