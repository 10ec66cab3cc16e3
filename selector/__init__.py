"""Risk-preserving subset selection over lm-eval logged samples (paper §5-§6, issue 4).

Modules, one job each:

* :mod:`selector.io`: lm-eval ``--log_samples`` folders -> :class:`~selector.io.RunMatrix`
  (episode x system pass/score matrices keyed by episode id; file:line errors).
* :mod:`selector.features`: the 12-dimensional episode features in four families.
* :mod:`selector.objective`: Psi = alpha*rho + beta*cov + gamma*hr and the metrics.
* :mod:`selector.greedy`: risk-cover seed phase + greedy forward selection.
* :mod:`selector.baselines`: Random, Stratified, Difficulty, Disagreement, Clustering,
  Trace-Feature.
* :mod:`selector.evaluate`: method comparison with bootstrap intervals, feature ablation,
  held-out system, drift check, and :func:`~selector.evaluate.run_pipeline`.
* :mod:`selector.stats`: Wilson intervals, McNemar, Fisher, Holm.
* :mod:`selector.report` / :mod:`selector.plots`: the byte-stable outputs of
  ``memrisk select``.

Command line: ``memrisk select RUN_DIR... --fraction 0.2 --out DIR`` and
``memrisk stats (--counts FILE.json | RUN_DIR...) [--json]``.
"""
