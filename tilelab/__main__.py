"""``python -m tilelab``: the ``tilelab`` command."""

from tilelab.cli import main

raise SystemExit(main())
