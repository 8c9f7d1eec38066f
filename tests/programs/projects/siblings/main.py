import pricing
import report

items = [("pen", 2, 3), ("ink", 1, 7)]
total = pricing.total_value(items)
cheap = pricing.cheapest(items)
line = report.summary(total, cheap)
print(line)
