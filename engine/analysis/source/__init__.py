"""What the CUDA text says, read without compiling or running it: syntax trees (`cuda_ast`), the values each lane
of a warp computes (`evaluator`, `interp`, `layouts`, `host`), launch shapes (`launch`), coalescing and bank
estimates (`access`), per-warp control flow (`control`) and structural features (`source_features`)."""
