--[[ settings: the field changes the configure scripts take: pairs (name, value) from ARGV[from]
  on, where an empty value removes the field. ]]

-- Splits the pairs into fields to set (flat name/value list) and names to remove.
local function fieldChanges(from)
  local set, del = {}, {}
  for i = from, #ARGV, 2 do
    if ARGV[i + 1] == '' then
      del[#del + 1] = ARGV[i]
    else
      set[#set + 1] = ARGV[i]
      set[#set + 1] = ARGV[i + 1]
    end
  end
  return set, del
end
