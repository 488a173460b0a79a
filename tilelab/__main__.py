"""``python -m tilelab``: the ``tilelab`` command."""

from tilelab.cli.main import main

raise SystemExit(main())
