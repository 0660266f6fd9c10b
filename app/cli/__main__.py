"""``python -m app.cli``: the same entry point as the ``sbc`` console script."""
from app.cli import main

main()
