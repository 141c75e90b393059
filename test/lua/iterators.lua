-- A generic for whose iterator waits between the values it gives.
local function countdown(n)
  return function()
    if n == 0 then return nil end
    wait()
    n = n - 1
    return n + 1
  end
end
for i in countdown(3) do
  print("countdown", i, tick())
end

-- pairs() calls __pairs from C; here that metamethod waits, and so does
-- the iterator it returns (next, wrapped).
local t = setmetatable({}, {__pairs = function(self)
  wait()
  local keys, i = {"x", "y"}, 0
  return function()
    i = i + 1
    if keys[i] then wait() return keys[i], i end
  end, self, nil
end})
for k, v in pairs(t) do
  print("pairs", k, v, tick())
end
