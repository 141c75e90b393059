-- wait and tick keep nothing a script can change: they have no upvalue to
-- set, and wait works on.
print("wait's upvalue:", debug.getupvalue(wait, 1))
print("set:", (debug.setupvalue(wait, 1, 42)), (debug.setupvalue(tick, 1, 42)))
wait()
print("waited to tick", tick())
wait(2)
print("waited to tick", tick())
