"""Map/reduce over a trace's files: local processes, a Dask cluster, the cache.

``run`` splits the work (files, and byte ranges of big files) and runs the
map step of ``map`` on it (binning the send times too when asked:
``SendTimes``, the report's one read); ``cache`` keeps each file's reduced
data. The PAPI trace has its map and reduce steps in ``papi`` (groups of files to
per-(PE, mailbox) sums) and its cache entries in ``papi_cache``.
"""

from .run import DEFAULT_SPLIT_BYTES, Engine, SendTimes, reduce_logical, run_map

__all__ = ["DEFAULT_SPLIT_BYTES", "Engine", "SendTimes", "reduce_logical", "run_map"]
