-- An error object with __tostring prints as its text, as lua.c prints it.
wait()
error(setmetatable({}, {__tostring = function() return "a table's own message" end}))
