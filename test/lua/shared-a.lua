-- Scripts share one Lua state: its globals, and what Lua owns, which lives
-- on Lua's heap and stays where it is while its script waits.
board = {"a was here"}
local note = ("held by a while it waits "):rep(2)
table.sort({2, 1}, function(x, y)
  wait(2)
  print("a wakes", tick(), note, table.concat(board, "; "))
  return x < y
end)

-- A Lua coroutine that waits at C level is running, not suspended: b, which
-- runs meanwhile, cannot resume it or close it (Lua refuses, in its words).
busy = coroutine.create(function()
  wait(2)
  print("a: busy goes on", tick(), coroutine.status(busy))
end)
print("a:", coroutine.resume(busy))
print("a:", coroutine.status(busy), tick())
