"""Word statistics: a small program to step through with the neural debugger."""


class Counter:
    def __init__(self):
        self.counts = {}

    def add(self, word):
        self.counts[word] = self.counts.get(word, 0) + 1

    def __repr__(self):
        return f"Counter({self.counts})"


def normalize(word):
    return word.strip(".,!").lower()


def top_words(text, n):
    counter = Counter()
    for raw in text.split():
        counter.add(normalize(raw))
    ranked = sorted(counter.counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:n]


best = top_words("The cat saw the dog. The dog ran!", 2)
print(best)
