--[[ removeDeduplicationKey: forgets a deduplication id, so the next add with it creates a job.
  KEYS: dedup
  ARGV: (none)
  Returns: 1 if the key existed, else 0. ]]

return redis.call('DEL', k.dedup)
