"""``python -m netsim`` runs the command line."""

from .cli import main

main()
