"""``python -m actorprof``."""

from .cli import main

main(prog_name="actorprof")
