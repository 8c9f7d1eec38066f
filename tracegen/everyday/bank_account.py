class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner, balance=0.0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        self.balance += amount
        self.history.append(("in", amount))

    def withdraw(self, amount):
        if amount > self.balance:
            raise InsufficientFunds(f"{self.owner} has {self.balance:.2f}")
        self.balance -= amount
        self.history.append(("out", amount))


acct = Account("ada", 10.0)
acct.deposit(0.1)
acct.deposit(0.2)
acct.withdraw(5.25)
try:
    acct.withdraw(100)
except InsufficientFunds as exc:
    problem = exc.args[0]
final = acct.balance
