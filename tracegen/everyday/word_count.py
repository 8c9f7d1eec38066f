from collections import Counter

text = """the cat sat on the mat
the dog sat on the log
a cat and a dog"""

words = text.split()
counts = Counter(words)
top = counts.most_common(3)
unique = sorted(set(words))
lengths = {w: len(w) for w in unique if len(w) > 2}

longest = ""
for w in unique:
    if len(w) > len(longest):
        longest = w

first_word, *others = top
print(first_word, len(unique))
