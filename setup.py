"""Build hooks that setup.cfg cannot express.

1. The lm-eval task configs live in ``tasks/`` (the design card's layout) but are
   installed as the package ``lm_eval_memrisk.lmeval_tasks``.
2. ``lm_eval_memrisk-autoload.pth`` is copied to the root of site-packages so that the
   plain ``lm_eval`` CLI finds the MemRiskBench tasks and models (see
   ``lm_eval_memrisk/_autoload.py`` and the README section "lm-eval integration").
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

PTH = "lm_eval_memrisk-autoload.pth"


class BuildPyWithPth(build_py):
    def run(self) -> None:
        super().run()
        src = Path(__file__).parent / "lm_eval_memrisk" / PTH
        if src.exists():
            self.copy_file(str(src), str(Path(self.build_lib) / PTH))


setup(
    # namespace packages too, so that data folders (lm_eval_memrisk/data, schema,
    # selector/data/reference) are listed packages and setuptools prints no warnings
    packages=find_namespace_packages(
        include=["lm_eval_memrisk", "lm_eval_memrisk.*", "selector", "selector.*"], exclude=["*.__pycache__"]
    )
    + ["lm_eval_memrisk.lmeval_tasks", "lm_eval_memrisk.lmeval_tasks.memriskbench"],
    cmdclass={"build_py": BuildPyWithPth},
)
