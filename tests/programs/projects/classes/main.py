from stack import Stack

s = Stack()
for v in [5, 1, 4]:
    s.push(v)
top = s.pop()
rest = s.peek()
print(s, top, rest)
