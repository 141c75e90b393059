-- Lua calls Lua without a C frame: a wait 100,000 Lua calls deep holds
-- little C stack; the Lua frames are on the Lua thread's own stack, on
-- Lua's heap.
local function down(n)
  if n == 0 then
    wait()
    return 0
  end
  return 1 + down(n - 1)
end
print("lua recursion", down(100000), tick())

-- Without end, Lua says "stack overflow" (its own stack, not the C stack).
local function forever(n) return 1 + forever(n + 1) end
local ok, message = pcall(forever, 1)
print(ok, (message:gsub("^.-: ", "")))

-- Each string.gsub callback that calls gsub again is another C call: Lua
-- stops it at its limit with "C stack overflow", and waits on the way down
-- (a few hundred KB of C stack at the deepest) come back intact.
local deepest = 0
local function nest(n)
  deepest = n
  return (("x"):gsub("x", function()
    if n % 40 == 0 then wait() end
    return nest(n + 1)
  end))
end
print(pcall(nest, 1))
print("deepest " .. deepest, "tick " .. tick())
