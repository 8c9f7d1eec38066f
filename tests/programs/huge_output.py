line = "y" * 1000
while True:
    print(line)
