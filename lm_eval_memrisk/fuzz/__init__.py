"""Memory-use fuzzer (U-Fuzz style): grow the benchmark with validated, failure-inducing
episodes.

Pipeline: :mod:`.seeds` (memory checkpoints) -> :mod:`.operators` (mutations with
explicit obligations, on the :mod:`.expectation` model) -> :mod:`.mutate` (provenance,
ids, tier) -> :mod:`.validate_mutant` (validator, oracle passes, adversary fails) ->
:mod:`.execute` (system under test, judging) with :mod:`.coverage`, :mod:`.margins`
(how close a planted target came to failing) and :mod:`.guidance` steering
:mod:`.campaign`, and :mod:`.report` writing the outputs.
The command is ``memrisk fuzz`` (:mod:`lm_eval_memrisk.cli.fuzz`).
"""
