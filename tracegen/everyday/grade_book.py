scores = {
    "maya": [88.5, 92.0, 79.25],
    "tom": [65.0, 71.5],
    "li": [],
}


def average(values):
    if not values:
        return None
    return sum(values) / len(values)


def letter(avg):
    if avg is None:
        return "-"
    if avg >= 85:
        return "A"
    if avg >= 70:
        return "B"
    return "C"


report = {}
for student, marks in scores.items():
    avg = average(marks)
    report[student] = (avg, letter(avg))

best = max((s for s in report if report[s][0] is not None), key=lambda s: report[s][0])
print(best, report[best])
