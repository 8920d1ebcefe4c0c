"""The engine-free cores: numpy and numba, no DuckDB."""
