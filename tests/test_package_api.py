"""The lazy public API of ``lm_eval_memrisk`` (``__all__`` and ``__getattr__``)."""

import lm_eval_memrisk


def test_all_lists_every_lazy_export_and_the_version():
    assert sorted(lm_eval_memrisk.__all__) == sorted([*lm_eval_memrisk._EXPORTS, "__version__"])


def test_every_name_in_all_resolves():
    for name in lm_eval_memrisk.__all__:
        assert getattr(lm_eval_memrisk, name) is not None
