"""The engine's side of storage: which database a process uses (`database`), the mappers between the
engine's records and the stored rows (`evaluation` for the evaluation row, `outcome` for everything one step
learned about a proposal), rows read back as records for the dashboard (`diagnostics`), and the recorded GPU
runs shipped with the project (`recorded`). Only this folder and `db` import the SQL libraries."""
