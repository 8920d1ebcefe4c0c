"""duckmine: data-mining algorithms that run inside DuckDB, next to the data."""

from .extension.arff import read_arff
from .extension.interrupts import interrupt
from .extension.loader import connect, load
from .extension.progress import watching as progress

__version__ = "0.1.0"
__all__ = ["connect", "interrupt", "load", "progress", "read_arff", "__version__"]
