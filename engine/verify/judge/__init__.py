"""The trusted side of the verifier: the judge process that decides every verdict.

`python -m engine.verify.judge --fd N` runs once per GPU (or CPU slot), in a sandbox of its own, and
never runs or imports candidate code. For each job the pool hands it a freshly started runner; the
judge makes the inputs from seeds the candidate cannot know, runs the reference, has the runner run
the candidate, compares, checks the runner's claimed timings against its own clock, times the
baselines itself and sends the verdict back to the pool.
"""
