"""``python -m norma`` runs the CLI (importing this module does nothing)."""

import sys

from norma.cli import main

if __name__ == "__main__":
    sys.exit(main())
