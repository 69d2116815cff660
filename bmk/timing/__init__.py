"""Timing: every chip's cost model (models.py; bm1688.py checked against the chip's measured
cycles), the scheduler the simulator shares (schedule.py), `timeline` (timeline.py), the
vendor's profiles read (profile.py) and measured-vs-estimated tables (compare.py)."""
