def parse_row(line):
    name, age = line.split(",")
    return {"name": name.strip(), "age": int(age)}


def load(text):
    rows = []
    for line in text.splitlines():
        if not line:
            continue
        rows.append(parse_row(line))
    return rows


people = load("ann, 31\n\nbob, 45\n")
ages = [p["age"] for p in people]
print(sum(ages))
