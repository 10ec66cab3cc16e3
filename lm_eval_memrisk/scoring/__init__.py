"""Scoring: reading a reply (parse, acts, frames, equivalence), the checks, the scorer and
the per-sample record.  Imports only the episode model.  Nothing is imported here.
"""
