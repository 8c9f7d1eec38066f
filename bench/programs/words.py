def count_words(text):
    counts = {}
    for word in text.split():
        word = word.lower()
        counts[word] = counts.get(word, 0) + 1
    return counts


def top(counts):
    best = None
    for word, n in counts.items():
        if best is None or n > counts[best]:
            best = word
    return best


c = count_words("the cat and the hat")
w = top(c)
print(w, c[w])
