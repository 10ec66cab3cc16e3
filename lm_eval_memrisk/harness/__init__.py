"""lm-eval glue: the task class, episodes as docs, and the models registered with lm-eval.

* :mod:`.task`: ``MemRiskTask`` and ``process_results`` (a call into the pure scorer);
* :mod:`.docs`, :mod:`.dataset`: episodes as lm-eval doc rows and the custom_dataset loader;
* :mod:`.agent_model`: the ``memrisk-agent`` model (reference agents, or a wrapped model);
* :mod:`.llama_cpp`: the in-process ``llama-cpp`` model;
* :mod:`.lm_adapter`: any lm-eval model as an agent.

Nothing is imported here: lm-eval reaches these modules through the task YAMLs and
:mod:`lm_eval_memrisk._autoload`.
"""
