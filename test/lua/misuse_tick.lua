-- A script's function may not tick: the host is in the middle of a tick.
tick_now()
print("never printed")
