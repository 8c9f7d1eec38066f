blob = bytearray(10 * 1024 ** 3)
print(len(blob))
