"""`python -m profilegen`."""

from profilegen.cli import main

main()
