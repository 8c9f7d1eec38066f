def clean(text):
    return "".join(ch.lower() for ch in text if ch.isalnum())


def is_palindrome(text):
    s = clean(text)
    return s == s[::-1]


checks = []
for t in ["Racecar", "hello", "A man a plan"]:
    checks.append(is_palindrome(t))
print(checks)
