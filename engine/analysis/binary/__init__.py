"""What the compiler made of a candidate: per-kernel resources from the ptxas log (`ptxas`), the SASS instruction
mix with source lines (`sass`) and the theoretical occupancy those resources allow (`occupancy`)."""
