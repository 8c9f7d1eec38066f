def letter(score):
    if score >= 90:
        return "A"
    if score >= 75:
        return "B"
    return "C"


def report(scores):
    out = {}
    for name, score in scores.items():
        out[name] = letter(score)
    return out


result = report({"ann": 93, "bob": 71, "cy": 80})
print(result)
