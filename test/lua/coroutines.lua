-- Lua's own coroutine.yield cannot leave a sort comparator: the contrast.
local co = coroutine.wrap(function()
  table.sort({3, 1, 2}, function(a, b) coroutine.yield() return a < b end)
end)
print(pcall(co))

-- wait can, even inside a Lua coroutine; and Lua's own yields keep
-- working beside it.
local gen = coroutine.wrap(function()
  for i = 1, 3 do
    local t = {3, 1, 2}
    table.sort(t, function(a, b) wait() return a < b end)
    coroutine.yield(i .. ": " .. table.concat(t, " "))
  end
  return "done"
end)
for _ = 1, 4 do
  print(gen(), tick())
end
