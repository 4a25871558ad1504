--[[ removeDeduplicationKey: forgets a deduplication id, so the next add with it creates a job.
  With a job id, only while the id still points to that job (job.removeDeduplicationKey: a
  later job's key is left alone).
  The add kept for when the job finishes (keepLastIfActive) is forgotten with it.
  KEYS: dedup, kept
  Flags: allow-oom (it only deletes: it runs while Redis is full, as it did as an EVAL script)
  ARGV: jobId
    jobId: the job the key must point to ('' = whichever job).
  Returns: 1 if the key was deleted, else 0. ]]

if argv.jobId ~= '' and redis.call('GET', k.dedup) ~= argv.jobId then return 0 end
local deleted = redis.call('DEL', k.dedup)
redis.call('DEL', k.kept)
return deleted
