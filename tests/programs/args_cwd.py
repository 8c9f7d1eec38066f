import os, sys
argv = sys.argv[1:]
here = os.getcwd()
name = __name__
done = True
