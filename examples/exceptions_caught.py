def parse(text):
    if not text.isdigit():
        raise ValueError(f"not a number: {text}")
    return int(text)


def total(items):
    s = 0
    bad = []
    for item in items:
        try:
            s += parse(item)
        except ValueError as exc:
            bad.append(str(exc))
        finally:
            s += 0
    return s, bad


result = total(["4", "x", "10"])
