import sys

from engine.verify.judge.serve import main

sys.exit(main(sys.argv[1:]))
