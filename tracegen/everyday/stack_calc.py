def evaluate(tokens):
    stack = []
    for tok in tokens:
        if tok in "+-*/":
            b = stack.pop()
            a = stack.pop()
            if tok == "+":
                stack.append(a + b)
            elif tok == "-":
                stack.append(a - b)
            elif tok == "*":
                stack.append(a * b)
            else:
                stack.append(a / b)
        else:
            stack.append(float(tok))
    return stack[0]


expr = "3 4 + 2.5 *".split()
value = evaluate(expr)
other = evaluate(["1", "3", "/"])
