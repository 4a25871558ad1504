--[[ occurrence: creates a scheduler's occurrence job from the scheduler's template. The job's id is
  sched:<schedulerId>:<instant ms> (BullMQ's repeat: form comes with a run moved from BullMQ; no script
  reads the id: an occurrence is known by its fields); `sk` names the scheduler and `si` holds
  the instant. A template with `rep` (the schedule's public repeat options, JSON) gives each
  occurrence BullMQ's options `repeat` (with the iteration `count`), `prevMillis` (the instant),
  `repeatJobKey` (the scheduler id) and `delay` (ms from creation to due), prepended to the
  template's options. ]]

-- The options JSON of one occurrence: the template's, with the schedule's fields in front.
local function occurrenceOpts(tpl, schedId, instant, count, delay)
  if not tpl.rep then return tpl.opts end
  local rep = tpl.rep
  if count then
    if rep == '{}' then rep = '{"count":' .. count .. '}' else rep = string.sub(rep, 1, -2) .. ',"count":' .. count .. '}' end
  end
  local head = '{"repeat":' .. rep .. ',"prevMillis":' .. string.format('%d', instant) .. ',"repeatJobKey":' .. cjson.encode(schedId) .. ',"delay":' .. string.format('%d', delay)
  if tpl.opts == '' or tpl.opts == '{}' then return head .. '}' end
  return head .. ',' .. string.sub(tpl.opts, 2)
end

-- Creates occurrence `id` for `instant`, delayed until `due` (or ready now when `ready`).
-- Returns the state it entered. `tpl` is the decoded template { name, data, opts, priority, rep };
-- `count` the occurrence's iteration number (nil for a triggered or backfilled run).
local function createOccurrence(k, base, id, schedId, instant, due, now, tpl, ready, count)
  local jk = jobKey(base, id)
  local fields = { 'n', tpl.name, 't', now, 'sk', schedId, 'si', instant }
  local group = groupOfOpts(tpl.opts)
  if group then fields[#fields + 1] = 'g'; fields[#fields + 1] = group end
  local delay = 0
  if not ready then delay = math.max(due - now, 0) end
  local opts = occurrenceOpts(tpl, schedId, instant, count, delay)
  if opts ~= '' then fields[#fields + 1] = 'o'; fields[#fields + 1] = opts end
  if tpl.priority > 0 then fields[#fields + 1] = 'p'; fields[#fields + 1] = tpl.priority end
  dataFields(base, id, tpl.data, fields)
  if ready then
    chunked('HSET', jk, fields, 2)
    local state = pushReady(k, jk, id, tpl.priority, false, group or false)
    signalWork(k.marker)
    return state
  end
  fields[#fields + 1] = 'dl'; fields[#fields + 1] = math.max(due - now, 0)
  fields[#fields + 1] = 's'; fields[#fields + 1] = 'delayed'
  chunked('HSET', jk, fields, 2)
  pushDelayed(k, jk, id, due)
  return 'delayed'
end

local function decodeTemplate(raw)
  local t = cjson.decode(raw)
  local rep = nil
  if type(t.rep) == 'string' and string.sub(t.rep, 1, 1) == '{' then rep = t.rep end
  return { name = t.name, data = t.data, opts = t.opts or '', priority = tonumber(t.priority) or 0, rep = rep,
    countBase = tonumber(t.cb) or 0 }
end
