-- A string.gsub callback waits between its matches.
local s = ("one two three"):gsub("%a+", function(word)
  wait()
  return word:upper() .. "@" .. tick()
end)
print(s)

-- gsub with a table looks each match up in it; C code reaches the
-- table's __index metamethod, which waits.
local upper = setmetatable({}, {__index = function(_, k) wait() return k:upper() end})
print((("a-b-c"):gsub("%a", upper)), "at tick " .. tick())

-- The strings a waiting callback holds are Lua's, on Lua's heap: they are
-- still there when it wakes up, whatever the other scripts did meanwhile.
local kept = {}
local out = ("x y z"):gsub("%a", function(c)
  local held = c:rep(3)
  wait()
  kept[#kept + 1] = held
  return held
end)
print(out, table.concat(kept, ","))
