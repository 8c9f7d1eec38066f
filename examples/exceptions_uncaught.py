def average(values):
    return sum(values) / len(values)


def report(groups):
    out = {}
    for name, values in groups.items():
        out[name] = average(values)
    return out


print(report({"a": [1, 2, 3]}))
print(report({"b": []}))
