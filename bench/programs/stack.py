class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()


s = Stack()
s.push(1)
s.push(2)
top = s.pop()
size = len(s.items)
print(top, size)
