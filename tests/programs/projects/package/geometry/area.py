def rectangle(w, h):
    result = w * h
    return result
