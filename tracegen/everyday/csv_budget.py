ROWS = """date,category,amount
01-02,food,12.40
01-02,transport,2.9
01-05,food,7.15
01-07,rent,650
01-09,food,oops
01-11,fun,18.5"""


def parse(text):
    records = []
    header, *body = text.splitlines()
    for raw in body:
        date, category, amount = raw.split(",")
        try:
            records.append((date, category, float(amount)))
        except ValueError:
            print("skipping", raw)
    return records


records = parse(ROWS)
totals = {}
for _, category, amount in records:
    totals[category] = totals.get(category, 0.0) + amount
biggest = max(totals, key=totals.get)
share = totals["food"] / sum(totals.values())
