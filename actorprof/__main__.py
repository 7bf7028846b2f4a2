"""``python -m actorprof``."""

from .cli import run

run()
