-- An error that is not a string is reported by its type, as lua.c does.
wait()
error({code = 1})
