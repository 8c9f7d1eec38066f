class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def deposit(self, amount):
        self.balance += amount
        return self.balance

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError("insufficient funds")
        self.balance -= amount
        return self.balance


acct = Account("ann", 10)
acct.deposit(15)
try:
    acct.withdraw(100)
except ValueError as err:
    message = str(err)
print(acct.balance, message)
