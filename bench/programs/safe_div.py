def safe_div(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return None


def ratios(pairs):
    out = []
    for a, b in pairs:
        r = safe_div(a, b)
        out.append(r)
    return out


print(ratios([(6, 3), (1, 0), (9, 4)]))
