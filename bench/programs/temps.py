def to_f(c):
    return c * 9 / 5 + 32


def summary(readings):
    hot = [r for r in readings if r > 25]
    avg = sum(readings) / len(readings)
    return to_f(avg), len(hot)


week = [21, 27, 30, 19, 24]
avg_f, hot_days = summary(week)
print(avg_f, hot_days)
