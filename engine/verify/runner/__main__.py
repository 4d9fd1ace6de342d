import sys

from engine.verify.runner.serve import main

sys.exit(main(sys.argv[1:]))
