--[[ trimEvents: trims the events stream to about `maxLength` entries.
  KEYS: events
  Flags: allow-oom (it only deletes: it runs while Redis is full, as it did as an EVAL script)
  ARGV: maxLength
  Returns: the number of entries removed. ]]

return redis.call('XTRIM', k.events, 'MAXLEN', '~', tonumber(argv.maxLength))
