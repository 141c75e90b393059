-- bench_lua's script of a whole run: it waits inside its table.sort
-- comparator (8 waits), then inside its string.gsub callback (3 waits).
local t = {5, 3, 1, 4, 2}
table.sort(t, function(a, b) wait() return a < b end)
local s = string.gsub("a b c", "%a", function(c) wait() return c:upper() end)
assert(table.concat(t, " ") == "1 2 3 4 5" and s == "A B C")
