"""Building blocks of the dashboard's pages.

`data` cached reads and the event watcher · `events` the watchdog-backed watcher itself ·
`code` Pygments source and diff views · `charts`/`chartdata` speedup, roofline and tree charts ·
`diagnostics` per-round tables · `run_view`, `runs_view`, `problems_view`, `new_run_view` page parts ·
`frame` what surrounds every page · `errors` errors in words · `style` colours, badges, formats ·
`engine_api` the door to `engine.runs.run`.
"""
