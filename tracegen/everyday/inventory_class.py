class Inventory:
    def __init__(self, name):
        self.name = name
        self.stock = {}

    def add(self, item, count):
        self.stock[item] = self.stock.get(item, 0) + count

    def remove(self, item, count):
        have = self.stock.get(item, 0)
        if count > have:
            raise ValueError(f"only {have} {item} left")
        self.stock[item] = have - count


shop = Inventory("corner")
shop.add("pens", 10)
shop.add("pads", 3)
shop.remove("pens", 4)
try:
    shop.remove("pads", 5)
except ValueError as err:
    message = str(err)
left = sorted(shop.stock.items())
