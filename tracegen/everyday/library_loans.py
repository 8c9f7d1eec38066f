from dataclasses import dataclass


@dataclass
class Book:
    title: str
    author: str
    year: int
    on_loan: bool = False


shelf = [
    Book("Dune", "Herbert", 1965),
    Book("Emma", "Austen", 1815),
    Book("Beloved", "Morrison", 1987),
]


def lend(books, title):
    for book in books:
        if book.title == title and not book.on_loan:
            book.on_loan = True
            return book
    return None


got = lend(shelf, "Emma")
again = lend(shelf, "Emma")
available = [b.title for b in shelf if not b.on_loan]
oldest = min(shelf, key=lambda b: b.year)
decades = sorted({b.year // 10 * 10 for b in shelf})
