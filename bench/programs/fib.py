def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


values = []
for k in range(5):
    values.append(fib(k))
print(values)
