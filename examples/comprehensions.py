words = ["apple", "bob", "kayak", "level", "python"]
lengths = {w: len(w) for w in words}
palindromes = [w for w in words if w == w[::-1]]
pairs = [(i, j) for i in range(3) for j in range(i)]
vowels = sorted({c for w in words for c in w if c in "aeiou"})
longest = max(words, key=len)
