def restock(stock, name, amount):
    stock[name] = stock.get(name, 0) + amount
    return stock[name]


def sell(stock, name):
    if stock.get(name, 0) == 0:
        return False
    stock[name] -= 1
    return True


stock = {"apple": 1}
sell(stock, "apple")
ok = sell(stock, "apple")
left = restock(stock, "pear", 4)
print(stock, ok, left)
