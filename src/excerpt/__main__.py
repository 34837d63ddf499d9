"""``python -m excerpt``: the same as the ``excerpt`` command."""

from excerpt.cli.main import main

main()
