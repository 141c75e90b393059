-- Never runs: it does not compile.
print("never printed"
wait()
