-- A number prints as the number.
wait(3)
error(42)
