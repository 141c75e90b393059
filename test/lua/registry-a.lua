-- No script reaches another's thread, even through the registry: every Lua
-- thread it holds is resumed, closed and searched for slots, and the
-- scripts after this one start as they were loaded.
local me = coroutine.running()
local found = 0
for key, value in pairs(debug.getregistry()) do
  if type(value) == "thread" and value ~= me then
    found = found + 1
    print("a: resume", key, coroutine.resume(value))
    print("a: close", key, pcall(coroutine.close, value))
    print("a: its first slot", key, pcall(debug.getlocal, value, 0, 1))
  end
end
print("a: threads found", found, "the main thread's", debug.getregistry()[1] ~= me)
wait()
print("a: ends at tick", tick())
