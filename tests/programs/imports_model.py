import model
import protocol
name = model.VALUE
print(name, hasattr(protocol, "State"))
