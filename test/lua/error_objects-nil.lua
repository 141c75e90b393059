-- No error object at all.
wait(4)
error()
