-- Out of memory at a wait: deep in a sort comparator, the library cannot
-- grow this script's buffer for its C stack (its allocations are refused),
-- so wait raises Lua's own "not enough memory" here, and the script goes on
-- where it was.  The script beside it runs on.
local function sort_waiting(t)
  table.sort(t, function(a, b) wait() return a < b end)
  return table.concat(t, " ")
end
wait()
-- Lua's allocator fails first, and the script catches its error...
lua_out_of_memory(true)
print("a: string.rep", pcall(string.rep, "x", 100))
lua_out_of_memory(false)
wait()
-- ...then the library's, at a wait deeper than any before.
refuse_library_allocations(1)
print("a: sort", pcall(sort_waiting, {3, 1, 2}))
print("a: library allocations refused", refused_library_allocations())
wait()
-- Uncaught, it ends this script, and the host's exit status is 1.
refuse_library_allocations(1)
sort_waiting({3, 1, 2})
print("never printed")
