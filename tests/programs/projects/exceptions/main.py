import validate

results = []
for raw in ["7", "x", "-2"]:
    try:
        results.append(validate.parse_positive(raw))
    except validate.InvalidValue as exc:
        results.append(str(exc))
print(results)
last = validate.parse_positive("-9")
