def apply_fee(amount, rate):
    fee = amount * rate // 100
    return amount - fee


balance = 250
ledger = []
for deposit in [40, 15, 90]:
    balance = apply_fee(balance + deposit, 3)
    ledger.append(balance)
summary = {"final": balance, "entries": len(ledger)}
print(summary)
