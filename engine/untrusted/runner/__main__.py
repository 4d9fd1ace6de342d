import sys

from engine.untrusted.runner.serve import main

sys.exit(main(sys.argv[1:]))
