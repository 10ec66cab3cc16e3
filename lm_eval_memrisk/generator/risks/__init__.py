"""One builder per risk, and the scenario families each risk draws from.

The v1 builders are the ``build`` functions of the modules the risk registry names
(:attr:`lm_eval_memrisk.episodes.risks.RiskSpec.builder`), one per registered risk.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from lm_eval_memrisk.episodes import risks
from lm_eval_memrisk.episodes.risks import RISK_TABLE
from lm_eval_memrisk.generator.risks.common import Ctx, Draft


def builder_module(risk: str) -> ModuleType:
    """The v1 builder module the registry names for ``risk`` (``RiskSpec.builder``)."""
    return importlib.import_module(f"{__name__}.{risks.spec(risk).builder}")


def families_of(risk: str) -> tuple[str, ...]:
    """The families ``risk`` draws from: :data:`RISK_FAMILIES`, or for a risk added to
    the registry, the ``FAMILIES`` of its builder module (so that adding a risk is its
    ``RiskSpec`` and its builder module)."""
    if risk in RISK_FAMILIES:
        return RISK_FAMILIES[risk]
    families = getattr(builder_module(risk), "FAMILIES", None)
    if not families:
        raise LookupError(f"{risk}: its builder module {risks.spec(risk).builder!r} defines no FAMILIES")
    return tuple(families)


def _builder(module: str) -> Callable[[Ctx], Draft]:
    build: Callable[[Ctx], Draft] = importlib.import_module(f"{__name__}.{module}").build
    return build


BUILDERS: dict[str, Callable[[Ctx], Draft]] = {s.risk: _builder(s.builder) for s in RISK_TABLE}

#: risk -> families it uses (each risk cycles through its list in a seeded order).
RISK_FAMILIES: dict[str, tuple[str, ...]] = {
    "R1": (
        "shipping_address",
        "phone_number",
        "email_address",
        "usual_order",
        "pickup_point",
        "meeting_slot",
        "door_code",
        "payment_card",
        "payout_account",
        "medication",
        "seat_preference",
        "api_token",
        "deadline",
        "loyalty_number",
    ),
    "R2": (
        "shipping_address",
        "phone_number",
        "email_address",
        "meeting_slot",
        "payment_card",
        "payout_account",
        "seat_preference",
        "deadline",
        "loyalty_number",
        "pickup_point",
    ),
    "R3": (
        "shipping_address",
        "phone_number",
        "email_address",
        "payment_card",
        "payout_account",
        "medication",
        "loyalty_number",
        "api_token",
        "door_code",
    ),
    "R4": (
        "payment_card",
        "shipping_address",
        "phone_number",
        "email_address",
        "api_token",
        "payout_account",
        "door_code",
        "medication",
        "pickup_point",
        "loyalty_number",
    ),
    "R5": (
        "shipping_address",
        "payment_card",
        "meeting_slot",
        "usual_order",
        "api_token",
        "preferred_airline",
        "email_address",
        "phone_number",
        "supplier_payment",
        "document_access",
        "medication",
    ),
    "R6": (
        "payout_account",
        "shipping_address",
        "email_address",
        "phone_number",
        "api_token",
        "pickup_point",
        "meeting_slot",
        "door_code",
    ),
}

#: R2 families that can hold workspace-level facts (needed by the ``scope`` rule).
R2_SCOPE_FAMILIES: tuple[str, ...] = (
    "shipping_address",
    "email_address",
    "payout_account",
    "api_token",
    "door_code",
    "loyalty_number",
)

__all__ = ["BUILDERS", "R2_SCOPE_FAMILIES", "RISK_FAMILIES", "Ctx", "Draft", "builder_module", "families_of"]
