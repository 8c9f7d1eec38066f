class Bad:
    def __repr__(self):
        raise ValueError("nope")

bad = Bad()
long_text = "x" * 70000
many = list(range(100))
done = True
