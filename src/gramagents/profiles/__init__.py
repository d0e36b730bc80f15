"""Profiles: a model's grammar competence across a suite's recipes, with honest statistics.

`suite.py` reads suites, `run.py` builds and evaluates their entries, `scores.py` reads the
items' scores, `stats.py` and `compute.py` make the statistics, `compare.py` the paired
comparison of `gramagents report A B`; a profile's report is `report/profile.py`.
"""
