TAKEN = {"admin", "root", "guest"}


def normalize(name):
    return name.strip().lower().replace(" ", "_")


def problems(name):
    issues = []
    if len(name) < 3:
        issues.append("too short")
    if not name[0].isalpha():
        issues.append("must start with a letter")
    if name in TAKEN:
        issues.append("taken")
    return issues


requests = ["  Ada Lovelace", "x", "Admin", "9lives"]
accepted, refused = [], {}
for raw in requests:
    name = normalize(raw)
    found = problems(name)
    if found:
        refused[name] = found
    else:
        accepted.append(name)
