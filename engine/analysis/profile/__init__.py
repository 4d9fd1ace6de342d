"""What a GPU measured: Nsight Compute around a command (`ncu`) or one verified candidate inside the verifier's
walls (`dynamic`, `profile_target`), the stored ncu record (`ncu_record`) and its agreement with the static
estimate (`agreement`), device ceilings (`devices`) and the roofline with its bottleneck class (`roofline`)."""
