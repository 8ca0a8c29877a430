"""``python -m norma`` runs the CLI."""

import sys

from norma.cli import main

sys.exit(main())
