-- wait inside pcall and xpcall, their error handling intact around it.
print(pcall(function() wait() return "pcall", tick() end))
print(pcall(function() wait() error("failed after a wait") end))
print(xpcall(function() wait() error("boom", 0) end,
  function(message) wait() return "handled at tick " .. tick() .. ": " .. message end))

-- A wait 150 pcalls deep: 150 nested protected calls, each a C frame (and a
-- setjmp buffer) on the script's stack, suspended and put back whole.
local function dive(n)
  if n == 0 then
    wait()
    return "bottom reached at tick " .. tick()
  end
  local ok, result = pcall(dive, n - 1)
  return result
end
print(dive(150))

-- Deeper still: Lua stops it with an error, long before the 1 MiB run stack
-- would overflow (it allows some 200 nested C calls).
local deepest = 0
local function sink(n)
  deepest = n
  if n % 50 == 0 then wait() end
  local ok, message = pcall(sink, n + 1)
  return message
end
print(sink(1), "deepest " .. deepest, "tick " .. tick())
