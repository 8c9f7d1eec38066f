TAX = 2


def line_value(item):
    name, count, price = item
    return count * price


def total_value(items):
    total = 0
    for item in items:
        total += line_value(item)
    return total + TAX


def cheapest(items):
    best = min(items, key=lambda it: it[2])
    return best[0]
