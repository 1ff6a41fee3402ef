"""The run machinery: what makes a pipeline resumable and observable.

config (the pipeline file), dir (the run directory), session and stream (one run's goldens in flight),
stages (the steps after grouping), manifest, plan, progress, rejects, output and sources.
"""
