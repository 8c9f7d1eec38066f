def greet(name, excited=False):
    msg = "Hello, " + name
    if excited:
        msg += "!"
    return msg


names = ["ann", "bob"]
lines = []
for i, n in enumerate(names):
    lines.append(greet(n, excited=i == 0))
print("\n".join(lines))
