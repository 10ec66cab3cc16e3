"""The learned surface reader (``memrisk audit``'s ``learned`` row).

A logistic regression (:mod:`.logreg`) over the surface features of each decision's
options (:mod:`.features`: candidate values and *ask*), trained on episodes that the
generator builds at the audited file's version with another seed (``train_seed``),
labelled with their ground truth: a value option is right when the decision's
reference action names it, the *ask* option when no value option is right and the
reference calls no tool.  One model scores every option, asking included.

At test time the reader sees only the :class:`~.view.View`; for each slot it takes its
best-scoring value and asks instead when *ask* outscores one of them; its replies are
scored by the real scorer like the shortcut agents' (:func:`.run.passes`), so a pass
is an episode that passes every check.  ``cross_validated`` is a second number: the
same reader trained and tested on the audited file, grouped by episode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lm_eval_memrisk.audit.features import Option, names, options
from lm_eval_memrisk.audit.logreg import Model, fit
from lm_eval_memrisk.audit.run import passes, tally
from lm_eval_memrisk.audit.shortcuts import Shortcut, ask_reply, reply_with
from lm_eval_memrisk.audit.view import AUDIT_PRESENTATION, View, read_view
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.errors import AuditError
from lm_eval_memrisk.episodes.loader import VERSION_FIELDS
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.generator.build import VERSIONS, generate
from lm_eval_memrisk.generator.verify import action_content
from lm_eval_memrisk.running.runner import decision_prompts

#: The generator seed of the training episodes (not the shipped seed nor 1-3, the
#: seeds the ceilings are tested on).
DEFAULT_TRAIN_SEED = 4242
#: Folds of the grouped (by episode) cross-validation on the audited file.
FOLDS = 5


def _views(ep: Episode) -> list[tuple[View, dict[str, Any]]]:
    """(view, reference action) of each decision point of ``ep``."""
    out = []
    for prompt in decision_prompts(ep, None, AUDIT_PRESENTATION):
        dp = ep.event(prompt.decision_id)
        out.append((read_view(prompt.messages, dict(dp.naive or {})), dict(dp.reference or {})))
    return out


def labelled(ep: Episode) -> list[tuple[Option, bool]]:
    """Every option of every decision of ``ep`` with its ground-truth label."""
    rows: list[tuple[Option, bool]] = []
    for view, reference in _views(ep):
        opts = options(view)
        content = action_content(reference)
        right = [names(o, content) for o in opts]
        ask_right = not any(right) and "tool" not in reference
        rows += [(o, ok if o.value is not None else ask_right) for o, ok in zip(opts, right)]
    return rows


def train(
    episodes: Sequence[Episode],
    cache: dict[str, list[tuple[Option, bool]]] | None = None,
    keep: Callable[[str], bool] | None = None,
) -> Model:
    """The reader's model, fitted on ``episodes``' labelled options (``cache``: labelled
    options by episode id, filled as they are read; ``keep``: only the features it
    accepts are learned, the others weigh nothing when the model reads)."""
    cache = {} if cache is None else cache
    for ep in episodes:
        if ep.id not in cache:
            cache[ep.id] = labelled(ep)
    rows = [row for ep in episodes for row in cache[ep.id]]
    feats = [sorted(f for f in o.features if keep is None or keep(f)) for o, _ in rows]
    return fit(feats, [ok for _, ok in rows])


def reader(model: Model) -> Shortcut:
    """The reader as an agent: per slot the best value, or ask when *ask* scores higher."""

    def agent(view: View) -> str:
        opts = options(view)
        ask = max((model.score(o.features) for o in opts if o.value is None), default=float("-inf"))
        choose: dict[str, str] = {}
        for key in view.keys:
            scored = [(model.score(o.features), o.value) for o in opts if o.key == key and o.value]
            if not scored:
                return ask_reply(view)
            best = max(scored, key=lambda sv: sv[0])  # first of equals: the key's own notes
            if ask > best[0]:
                return ask_reply(view)
            choose[key] = best[1]
        return reply_with(view, choose)

    return Shortcut("learned", "learned", agent, "logistic regression over surface features")


def generator_version(episodes: Sequence[Episode]) -> str:
    """The generator version (``v5`` ...) the episodes' ``version`` field names."""
    fields = sorted({ep.version for ep in episodes})
    if len(fields) != 1:
        raise AuditError(f"the learned reader needs episodes of one version, got {fields}")
    field = fields[0]
    return VERSION_FIELDS.get(field, f"v{field.split('.')[0]}")


def training_episodes(episodes: Sequence[Episode], train_seed: int) -> list[Episode]:
    """The generator's episodes at ``episodes``' version and ``train_seed``; an error if
    they are the audited episodes themselves."""
    if isinstance(train_seed, bool) or not isinstance(train_seed, int) or train_seed < 0:
        raise AuditError(f"--train-seed must be a non-negative integer, got {train_seed!r}")
    version = generator_version(episodes)
    if version not in VERSIONS:
        raise AuditError(
            f"the generator cannot build training episodes of version {version!r} "
            f"(it builds {sorted(VERSIONS)})"
        )
    train_set = generate(train_seed, version=version)
    if {dumps_episode(e) for e in train_set} & {dumps_episode(e) for e in episodes}:
        raise AuditError(
            f"training seed {train_seed} rebuilds episodes of the audited file; "
            "pass another --train-seed"
        )
    return train_set


def cross_validated(episodes: Sequence[Episode], folds: int = FOLDS) -> dict[str, Any]:
    """Pass counts when each episode is read by a model trained on the other folds
    (episode ``i`` in fold ``i % folds``)."""
    ok: dict[str, bool] = {}
    cache: dict[str, list[tuple[Option, bool]]] = {}
    for k in range(folds):
        held = [ep for i, ep in enumerate(episodes) if i % folds == k]
        rest = [ep for i, ep in enumerate(episodes) if i % folds != k]
        if not held or not rest:
            continue
        sc = reader(train(rest, cache))
        ok.update({ep.id: passes(sc, ep) for ep in held})
    return tally(episodes, lambda ep: ok[ep.id])


def learned_audit(
    episodes: Sequence[Episode], train_seed: int = DEFAULT_TRAIN_SEED
) -> dict[str, Any]:
    """``{"learned": {R1..R6, "main": cell}, "learned_cv": {...}, "learned_setup": {...}}``:
    the reader trained on the generator's ``train_seed`` episodes, tested on ``episodes``."""
    train_set = training_episodes(episodes, train_seed)
    sc = reader(train(train_set))
    return {
        "learned": tally(episodes, lambda ep: passes(sc, ep)),
        "learned_cv": cross_validated(episodes),
        "learned_setup": {
            "train_seed": train_seed,
            "train_version": generator_version(episodes),
            "train_episodes": len(train_set),
            "cv_folds": FOLDS,
        },
    }
