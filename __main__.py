import sys

from .extension.cli import main

sys.exit(main())
