"""lenex benchmarks: scripts that print tables and write JSON, not timed tests.

`python -m benchmarks` (from the repository root) runs every section; see run_all.py.
"""
