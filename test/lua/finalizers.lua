-- A finalizer cannot wait: inside one, the collector is stopped.
setmetatable({}, {__gc = function()
  print("finalizer in the script:", pcall(function() wait() end))
end})
collectgarbage()

-- At the end, lua_close runs the finalizers from main, where no script is
-- running: wait is an error there too, and the host goes on to exit.
closing = setmetatable({}, {__gc = function()
  print("finalizer at close:", pcall(function() wait() end))
  print("tick at close:", tick())
end})
wait()
print("script ends at tick " .. tick())
