TAX = 0.08

cart = [
    {"name": "apples", "price": 0.4, "qty": 6},
    {"name": "bread", "price": 2.15, "qty": 1},
    {"name": "milk", "price": 0.99, "qty": 2},
]

subtotal = 0
for row in cart:
    line = row["price"] * row["qty"]
    subtotal += line

tax = round(subtotal * TAX, 2)
total = subtotal + tax
print(f"subtotal {subtotal:.2f}, tax {tax}, total {total:.2f}")
