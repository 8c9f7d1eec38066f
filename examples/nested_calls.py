def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def scale(values, factor):
    return [clamp(v * factor, 0, 10) for v in values]


def summary(values):
    scaled = scale(values, 3)
    return {"min": min(scaled), "max": max(scaled), "sum": sum(scaled)}


s = summary([1, 2, 5, -1])
