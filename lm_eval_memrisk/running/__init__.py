"""Running agents on episodes: reference and planted-weakness agents, the runner and
interactive mode, memory policies and backends, systems, the run pipeline and run folders.
Imports the episode model and scoring.  Nothing is imported here.
"""
