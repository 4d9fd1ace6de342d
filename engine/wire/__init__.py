"""What both sides of the verifier's trust boundary share, and nothing else.

The judge (trusted) and the runner (the candidate's sandboxed process) speak through `channel`
(length-prefixed JSON messages over a Unix socket, descriptors passed alongside) and exchange tensors
through `shared` (one memory region the judge creates and the runner maps). Both make a problem's
inputs from a seed with `inputs` / `c_inputs` / `reference_module`, so only seeds cross the boundary,
never the inputs' values; both time with `timing`, as a `policy.TrialPolicy` says. `candidate` is what
the runner is told about the candidate it loads: no seed, no expected output, no tolerance. `replies` is
what the judge accepts back: one strict, bounded pydantic model per reply kind (only the judge imports
it); `limits` the bounds the runner keeps to. Imports: the standard library, numpy, torch and (in
`replies`) pydantic; nothing here imports from the trusted side.
"""
