"""Tool schemas used by the scenario families (JSON-Schema ``parameters``)."""

from __future__ import annotations

from collections.abc import Mapping

from lm_eval_memrisk.episodes.records import Tool


def _tool(
    name: str,
    description: str,
    props: Mapping[str, str],
    required: tuple[str, ...],
    terminal: bool = True,
) -> Tool:
    properties = {k: {"type": t} for k, t in props.items()}
    return Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": properties, "required": list(required)},
        terminal=terminal,
    )


S = "string"
TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        _tool(
            "ship_order",
            "Place an order and ship it to a postal address.",
            {"item": S, "address": S},
            ("item", "address"),
        ),
        _tool(
            "send_sms",
            "Send a text message to a phone number.",
            {"to": S, "message": S},
            ("to", "message"),
        ),
        _tool(
            "call_contact",
            "Place a phone call to a number.",
            {"number": S, "reason": S},
            ("number",),
        ),
        _tool(
            "send_email",
            "Send an email.",
            {"to": S, "subject": S, "body": S},
            ("to", "subject", "body"),
        ),
        _tool(
            "schedule_meeting",
            "Put a meeting in the calendar.",
            {"title": S, "when": S, "attendees": S},
            ("title", "when"),
        ),
        _tool(
            "charge_card",
            "Charge a payment card for a purchase.",
            {"card": S, "amount": "number", "description": S},
            ("card", "amount"),
        ),
        _tool(
            "transfer_funds",
            "Transfer money to a bank account.",
            {"payee_account": S, "amount": "number", "reference": S},
            ("payee_account", "amount"),
        ),
        _tool(
            "refill_prescription",
            "Request a prescription refill from a pharmacy.",
            {"medication": S, "pharmacy": S},
            ("medication",),
        ),
        _tool(
            "book_flight",
            "Book a flight.",
            {"route": S, "date": S, "seat": S, "airline": S},
            ("route", "date"),
        ),
        _tool(
            "configure_integration",
            "Connect a third-party service with an API token.",
            {"service": S, "api_token": S},
            ("service", "api_token"),
        ),
        _tool(
            "set_reminder",
            "Create a reminder with a due date.",
            {"task": S, "due": S},
            ("task", "due"),
        ),
        _tool(
            "book_hotel",
            "Book a hotel room.",
            {"hotel": S, "nights": "integer", "rewards_number": S},
            ("hotel", "nights"),
        ),
        _tool(
            "message_courier",
            "Send delivery instructions to the courier of an order.",
            {"order_ref": S, "note": S},
            ("order_ref", "note"),
        ),
        _tool(
            "order_meal",
            "Order food for delivery.",
            {"restaurant": S, "dish": S},
            ("restaurant", "dish"),
        ),
        _tool(
            "book_ride", "Book a taxi.", {"pickup": S, "destination": S}, ("pickup", "destination")
        ),
        _tool(
            "share_document",
            "Share a document with someone.",
            {"document": S, "recipient": S},
            ("document", "recipient"),
        ),
        _tool("search_web", "Search the web.", {"query": S}, ("query",), terminal=False),
        _tool(
            "get_weather",
            "Get the weather forecast for a place.",
            {"place": S},
            ("place",),
            terminal=False,
        ),
        _tool(
            "create_note",
            "Save a note to the user's notebook.",
            {"text": S},
            ("text",),
            terminal=False,
        ),
        _tool(
            "lookup_records",
            "Look something up in the connected records (CRM, inbox, profile).",
            {"query": S},
            ("query",),
            terminal=False,
        ),
    )
}

#: Tools that may be added to an episode as unrelated options.
DECOYS: tuple[str, ...] = ("search_web", "get_weather", "create_note", "set_reminder", "send_email")
