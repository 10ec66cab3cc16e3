"""The episode model: records and traces, loading, validation, replayed state and rendering.

The lowest layer: it imports nothing else of ``lm_eval_memrisk`` (one named exception,
:func:`.validate.behaviour_problems`, runs the reference agents for ``memrisk validate``;
see docs/architecture.md and tests/test_architecture.py).  Nothing is imported here.
"""
