-- A __tostring that gives no string: the object prints by its type.
wait(2)
error(setmetatable({}, {__tostring = function() return 42 end}))
