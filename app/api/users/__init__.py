"""/api/users — people who log in. Passwords are bcrypt-hashed and never returned."""
