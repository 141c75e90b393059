-- A bad argument to wait is a Lua error, which the script may catch.
print(pcall(function() wait(0) end))
print(pcall(function() wait(-3) end))
print(pcall(function() wait("soon") end))
print(pcall(function() wait(1.5) end))
wait()
print("still here at tick " .. tick())
-- The tick is a Lua integer: it must not overflow.
print(pcall(function() wait(math.maxinteger) end))
-- Uncaught, a bad argument ends the script.
wait(0)
print("never printed")
