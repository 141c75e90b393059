-- Metamethods wait, whether Lua code or C code calls them.
local slow = setmetatable({}, {
  __index = function(_, key) wait() return key .. "!" end,
  __call = function(_, x) wait(2) return x * 2 end,
  __len = function() wait() return 42 end,
  __tostring = function() wait() return "a slow table" end,
  __concat = function(a, b) wait() return "joined" end,
})
print(slow.hello, tick())               -- __index, from Lua
print(slow(21), tick())                 -- __call, from Lua
print(pcall(slow, 5))                   -- __call, from pcall (C)
print(#slow, tick())                    -- __len
print(tostring(slow), tick())           -- __tostring, from tostring (C)
print(slow .. "x", tick())              -- __concat

-- __lt and __le from comparisons in Lua, __eq too.
local V = {}
V.__lt = function(a, b) wait() return a.v < b.v end
V.__le = function(a, b) wait() return a.v <= b.v end
V.__eq = function(a, b) wait() return a.v == b.v end
local x, y = setmetatable({v = 1}, V), setmetatable({v = 2}, V)
print(x < y, x <= y, x == y, tick())

-- table.concat reads through __index from C as well.
local lazy = setmetatable({n = 3}, {__index = function(_, i) wait() return "item" .. i end})
print(table.concat(lazy, " ", 1, 3), tick())
