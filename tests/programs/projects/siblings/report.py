def summary(total, cheap):
    words = ["total", str(total)]
    words.append("cheapest " + cheap)
    return " ".join(words)
