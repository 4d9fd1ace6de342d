import sys

from engine.untrusted.probe.problem import main

sys.exit(main(sys.argv[1:]))
