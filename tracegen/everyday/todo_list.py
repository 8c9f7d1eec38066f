class Task:
    def __init__(self, title, priority=3):
        self.title = title
        self.priority = priority
        self.done = False

    def finish(self):
        self.done = True


class TodoList:
    def __init__(self):
        self.tasks = []

    def add(self, title, priority=3):
        task = Task(title, priority)
        self.tasks.append(task)
        return task

    def pending(self):
        return [t.title for t in self.tasks if not t.done]


todo = TodoList()
first = todo.add("write report", 1)
todo.add("call bank")
todo.add("water plants", 5)
first.finish()
remaining = todo.pending()
urgent = min(todo.tasks, key=lambda t: t.priority).title
