"""One chaos run: setup, load + faults, heal, drain, collect, check, report."""
