"""Run orchestration: one refinement run stepped until done (`run`, also the run process's entry point
`python -m engine.runs.run ID`), the samples of a step as their replies arrive (`step_samples`), what happens
to each proposal (`pipeline`: verify, analyse, feedback, reward), the event files watchers read (`events`)
and what a run's LLM calls used (`usage`)."""
