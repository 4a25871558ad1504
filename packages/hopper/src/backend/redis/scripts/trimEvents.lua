--[[ trimEvents: trims the events stream to about `maxLength` entries.
  KEYS: events
  ARGV: maxLength
  Returns: the number of entries removed. ]]

return redis.call('XTRIM', k.events, 'MAXLEN', '~', tonumber(argv.maxLength))
