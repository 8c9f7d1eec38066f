COUNT = 0


class Square:
    def __init__(self, side):
        global COUNT
        COUNT += 1
        self.side = side
