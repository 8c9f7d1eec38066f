def line_total(price, qty):
    return price * qty


def cart_total(items, discount):
    total = 0
    for price, qty in items:
        total += line_total(price, qty)
    if total > 50:
        total = total - discount
    return total


items = [(12, 2), (5, 3), (30, 1)]
paid = cart_total(items, 7)
print("paid", paid)
