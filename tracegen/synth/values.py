"""Random literal values: function inputs and the small constants that appear in generated code.

Every function takes the `random.Random` it draws from; nothing here holds state.
"""
from __future__ import annotations

import random
import string

WORDS: tuple[str, ...] = (
    "apple", "bob", "cat", "dog", "egg", "fig", "grape", "hat", "ice", "jam", "kiwi", "lamp",
    "moon", "net", "owl", "pear", "quiz", "rose", "sun", "tree", "up", "van", "wolf", "yak", "zoo",
    "alpha", "beta", "gamma", "delta", "red", "blue", "green", "x", "ab", "abc", "aa", "Hello",
    "World", "Py", "data", "key", "val", "node", "left", "right",
)
_ALPHABETS: tuple[str, ...] = (
    string.ascii_lowercase,
    "abcde",
    "aabbc",
    string.ascii_letters,
    string.ascii_lowercase + string.digits,
    "abcXYZ019 ",
    "ab -_.,!",
    "0123456789",
    "xyz  \t",
    "AEIOUaeiou",
)


def rand_str(rng: random.Random, max_len: int = 14) -> str:
    """A random string: a few words, or characters from one of several alphabets."""
    style = rng.random()
    if style < 0.3:
        sep = rng.choice([" ", "", "-", ",", "_", " "])
        return sep.join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))[: max_len + 6]
    alphabet = rng.choice(_ALPHABETS)
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))


def rand_char(rng: random.Random) -> str:
    """A single character, biased towards letters that occur in `rand_str` outputs."""
    return rng.choice("aabcdexyz -_.,!0123AEX")


def rand_small_str(rng: random.Random) -> str:
    """A short constant for code: a character, a pair, or a short word."""
    r = rng.random()
    if r < 0.5:
        return rand_char(rng)
    if r < 0.8:
        return rng.choice("abcdexyz") + rng.choice("abcdexyz")
    return rng.choice(WORDS)[:4]


def rand_int(rng: random.Random, lo: int = -5, hi: int = 20) -> int:
    return rng.randint(lo, hi)


def rand_list_int(rng: random.Random, max_len: int = 8) -> list[int]:
    lo, hi = rng.choice([(0, 9), (-5, 5), (1, 20), (0, 3)])
    return [rng.randint(lo, hi) for _ in range(rng.randint(0, max_len))]


def rand_list_str(rng: random.Random, max_len: int = 6) -> list[str]:
    if rng.random() < 0.5:
        return [rng.choice(WORDS) for _ in range(rng.randint(0, max_len))]
    return [rand_str(rng, 5) for _ in range(rng.randint(0, max_len))]


def rand_dict(rng: random.Random, max_len: int = 5) -> dict[str, int]:
    keys = rng.sample(WORDS, rng.randint(0, max_len))
    return {k: rng.randint(-3, 12) for k in keys}
