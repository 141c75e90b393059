-- The message handler runs in the script's coroutine: a __tostring may wait.
error(setmetatable({}, {__tostring = function()
  print("waits: __tostring at tick", tick())
  wait(5)
  return "told at tick " .. tick()
end}))
