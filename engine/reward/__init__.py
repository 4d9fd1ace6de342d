"""The reward a result earns: its components and the unified score (`score`), and a person's review of a
flagged result, which holds the speed term aside until cleared (`review`)."""
