readings = [21.5, 22.1, None, 23.8, 19.95, None, 20.2]

valid = [t for t in readings if t is not None]
missing = len(readings) - len(valid)
mean = sum(valid) / len(valid)
low, high = min(valid), max(valid)
spread = high - low

fahrenheit = []
for celsius in valid:
    f = celsius * 9 / 5 + 32
    fahrenheit.append(round(f, 1))

above = [t for t in valid if t > mean]
summary = {"mean": round(mean, 2), "range": (low, high), "missing": missing}
print(summary)
