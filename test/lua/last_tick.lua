-- The tick is a Lua integer: a script waits up to math.maxinteger, and not
-- one tick past it.
wait(2)
print(pcall(function() wait(math.maxinteger - tick() + 1) end))
wait(math.maxinteger - tick())
print("at the last tick:", tick() == math.maxinteger)
print(pcall(function() wait() end))
