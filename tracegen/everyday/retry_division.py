pairs = [(10, 4), (3, 0), (7, 2.5), (1, 3)]

results = []
failures = 0
attempts = 0
for top, bottom in pairs:
    try:
        value = top / bottom
    except ZeroDivisionError:
        failures += 1
        value = None
    finally:
        attempts += 1
    results.append(value)

numbers = [r for r in results if r is not None]
third = numbers[-1]
ratio = failures / attempts
