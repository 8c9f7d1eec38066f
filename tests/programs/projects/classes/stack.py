class Stack:
    def __init__(self):
        self.items = []

    def push(self, value):
        self.items.append(value)
        return len(self.items)

    def pop(self):
        value = self.items.pop()
        return value

    def peek(self):
        return self.items[-1]

    def __repr__(self):
        return f"Stack({self.items})"
