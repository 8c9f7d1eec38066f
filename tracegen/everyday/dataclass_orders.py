from dataclasses import dataclass, field


@dataclass
class Order:
    id: int
    customer: str
    items: list = field(default_factory=list)
    paid: bool = False

    def total(self):
        return sum(price for _, price in self.items)


orders = [
    Order(1, "kim", [("tea", 3.5), ("cake", 2.25)]),
    Order(2, "raj", [("coffee", 2.8)], paid=True),
    Order(3, "kim"),
]

unpaid = [o for o in orders if not o.paid]
by_customer = {}
for order in orders:
    by_customer[order.customer] = by_customer.get(order.customer, 0) + order.total()
owed = sum(o.total() for o in unpaid)
