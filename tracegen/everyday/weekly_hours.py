hours = {
    "mon": (9.0, 17.5),
    "tue": (8.5, 16.0),
    "wed": (10.0, 12.25),
    "thu": (9.0, 18.0),
}
RATE = 18.75
OVERTIME_AFTER = 8


def day_pay(start, end):
    worked = end - start
    extra = max(0.0, worked - OVERTIME_AFTER)
    return worked, (worked - extra) * RATE + extra * RATE * 1.5


week = {}
for day, (start, end) in hours.items():
    week[day] = day_pay(start, end)

total_hours = sum(w for w, _ in week.values())
total_pay = sum(p for _, p in week.values())
longest_day = max(week, key=lambda d: week[d][0])
