"""lm-eval task configs, installed as ``lm_eval_memrisk.lmeval_tasks``."""
