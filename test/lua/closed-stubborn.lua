-- Catches the error its wait raised at the close, and waits again: it is
-- freed there, running no further.
print("stubborn: the close's error, caught:", pcall(wait, 100))
wait(100)
print("stubborn: runs on after the close (wrong)")
