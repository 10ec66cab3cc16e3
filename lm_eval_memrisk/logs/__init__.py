"""Reading logs: run folders and lm-eval sample logs read, verified and re-scored
(runs, recompute, rederive, rescore), invalid replies, names made safe for reports.
Imports the layers below.  Nothing is imported here.
"""
