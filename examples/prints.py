def banner(title):
    line = "=" * len(title)
    print(line)
    print(title)
    print(line)
    return len(title)


width = banner("Report")
for i in range(3):
    print(f"row {i}:", i * width)
print("done", end="!\n")
