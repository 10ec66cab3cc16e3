"""Everyday families: deliveries, contact details, meals, rides, meetings, door codes."""

from __future__ import annotations

import random
from collections.abc import Callable

from lm_eval_memrisk.generator import pools, values
from lm_eval_memrisk.generator.families.base import STATES, UPDATES, Family, Task
from lm_eval_memrisk.generator.families.tools import TOOLS

TEXT_THINGS: tuple[str, ...] = (
    "the pickup code for the dry cleaning", "the link to the shared photo album",
    "the gate number for tomorrow's flight", "the address of the dinner venue",
    "the wifi password for the holiday flat", "the booking reference for the museum",
    "the name of the plumber", "the parking permit number",
)  # fmt: skip
#: v6: what to text, with its content in the request (v1's things were never given).
KNOWN_TEXT_THINGS: tuple[str, ...] = (
    "a reminder that the plumber comes on Friday at 3pm", "a note that dinner is at 7:30 at Luca's",
    "a heads-up that I'm running ten minutes late", "a reminder that the dry cleaning is ready",
    "a note that the museum tickets are for Saturday at 11am", "a reminder to bring the spare keys",
    "a note that the parcel is with the neighbour at number 12", "a reminder that the bins go out tonight",
)  # fmt: skip


def _t(key: str, pool: tuple[str, ...]) -> Callable[[random.Random], Task]:
    """A task maker that draws one field from ``pool``."""

    def make(rng: random.Random) -> Task:
        return {key: rng.choice(pool)}

    return make


SHIPPING = Family(
    name="shipping_address",
    key="shipping address",
    noun="shipping address",
    label="address",
    tool=TOOLS["ship_order"],
    arg="address",
    make_value=values.address,
    shared_value=values.address,
    make_task=_t("item", pools.PRODUCTS),
    build_args=lambda task, v: {"item": task["item"], "address": v},
    asks=(
        "Please order the {{ item }} and ship it to {{ whose }} {{ noun }}.",
        "Can you get the {{ item }} sent out? Use {{ whose }} usual {{ noun }}.",
        "I'd like the {{ item }} delivered — same {{ noun }} as always, please.",
        "Order the {{ item }} for {{ whom }}, shipped to the address you have on file.",
    ),
    states=STATES
    + (
        "For deliveries, use {{ value }}.",
        "Parcels should go to {{ value }} — that's {{ whose }} {{ noun }}.",
    ),
    updates=UPDATES
    + (
        "We've moved! The new {{ noun }} is {{ value }}.",
        "Deliveries go to {{ value }} from now on.",
    ),
    done="Order placed.",
)

PHONE = Family(
    name="phone_number",
    key="phone number",
    noun="phone number",
    label="phone",
    tool=TOOLS["send_sms"],
    arg="to",
    make_value=values.phone,
    make_task=_t("thing", TEXT_THINGS),
    known_tasks=_t("thing", KNOWN_TEXT_THINGS),
    build_args=lambda task, v: {"to": v, "message": f"As requested: {task['thing']}."},
    asks=(
        "Text {{ whom }} {{ thing }}, please — to {{ whose }} {{ noun }}.",
        "Can you send {{ thing }} to {{ whose }} phone by SMS?",
        "Please SMS {{ thing }} to {{ whose }} number.",
    ),
    states=STATES + ("You can reach {{ whom }} on {{ value }}.",),
    updates=UPDATES + ("New phone, new number: {{ value }}.",),
    done="Message sent.",
)

EMAIL = Family(
    name="email_address",
    key="email address",
    noun="email address",
    label="email",
    tool=TOOLS["send_email"],
    arg="to",
    make_value=values.personal_email,
    shared_value=values.shared_email,
    make_task=_t("doc", pools.DOCUMENTS),
    build_args=lambda task, v: {
        "to": v,
        "subject": task["doc"].capitalize(),
        "body": task.get("body", f"Attached: the {task['doc']}."),  # v7 says what it is
    },
    asks=(
        "Email the {{ doc }} to {{ whose }} {{ noun }}, please.",
        "Could you send {{ whom }} the {{ doc }} by email?",
        "Please forward the {{ doc }} to {{ whose }} inbox.",
    ),
    states=STATES + ("Mail for {{ whom }} goes to {{ value }}.",),
    updates=UPDATES + ("I've switched email providers — use {{ value }} now.",),
    done="Email sent.",
)

MEAL = Family(
    name="usual_order",
    key="usual lunch order",
    noun="usual lunch order",
    label="dish",
    tool=TOOLS["order_meal"],
    arg="dish",
    make_value=values.dish,
    make_task=_t("restaurant", pools.RESTAURANTS),
    build_args=lambda task, v: {"restaurant": task["restaurant"], "dish": v},
    asks=(
        "Order {{ whose }} usual lunch from {{ restaurant }}, please.",
        "I'm starving — get {{ whom }} the usual from {{ restaurant }}.",
        "Can you put in {{ whose }} regular lunch order at {{ restaurant }}?",
    ),
    states=STATES + ("When I order lunch, I always get the {{ value }}.",),
    updates=UPDATES + ("I'm bored of my lunch — switch my usual to the {{ value }}.",),
    done="Lunch is ordered.",
)

PICKUP = Family(
    name="pickup_point",
    key="pickup point",
    noun="usual pickup point",
    label="pickup",
    tool=TOOLS["book_ride"],
    arg="pickup",
    make_value=values.pickup,
    make_task=_t("destination", pools.RIDE_DESTINATIONS),
    known_tasks=_t("destination", pools.KNOWN_RIDE_DESTINATIONS),
    build_args=lambda task, v: {"pickup": v, "destination": task["destination"]},
    asks=(
        "Book {{ whom }} a taxi to {{ destination }} from {{ whose }} {{ noun }}.",
        "I need a cab to {{ destination }} — usual pickup spot, please.",
        "Please get a ride to {{ destination }}, collecting {{ whom }} at the usual place.",
    ),
    states=STATES + ("Drivers should pick {{ whom }} up at {{ value }}.",),
    done="Taxi booked.",
)

MEETING = Family(
    name="meeting_slot",
    key="regular meeting slot",
    noun="regular meeting slot",
    label="slot",
    tool=TOOLS["schedule_meeting"],
    arg="when",
    make_value=values.meeting_slot,
    make_task=_t("title", pools.MEETINGS),
    build_args=lambda task, v: {"title": task["title"], "when": v},
    asks=(
        "Book the {{ title }} in {{ whose }} {{ noun }}.",
        "Please schedule the {{ title }} at the usual time.",
        "Put the {{ title }} in the calendar — {{ whose }} regular slot.",
    ),
    states=STATES + ("I keep {{ value }} free every week for meetings.",),
    updates=UPDATES + ("My regular slot moves to {{ value }} from now on.",),
    done="Meeting booked.",
)


def _order_ref(rng: random.Random) -> Task:
    return {"order_ref": f"ORD-{rng.randint(10000, 99999)}"}


def _order_ref_plain_note(rng: random.Random) -> Task:
    """v6: the courier's note carries the code and nothing the user did not ask for."""
    return {**_order_ref(rng), "door_note": "plain"}


def _door_note(task: Task, code: str) -> str:
    if task.get("door_note") == "plain":
        return f"Door code {code}."
    return f"Door code {code}, then leave it at reception."


DOOR = Family(
    name="door_code",
    key="door code",
    noun="door code",
    label="code",
    tool=TOOLS["message_courier"],
    arg="note",
    make_value=values.door_code,
    shared_value=values.door_code,
    value_in_text=True,
    make_task=_order_ref,
    known_tasks=_order_ref_plain_note,
    build_args=lambda task, v: {"order_ref": task["order_ref"], "note": _door_note(task, v)},
    asks=(
        "The courier for order {{ order_ref }} can't get in — send them {{ whose }} {{ noun }}.",
        "Please message the driver of {{ order_ref }} with the code for the front door.",
        "Order {{ order_ref }} is at the entrance; give the courier {{ whose }} {{ noun }}.",
    ),
    states=STATES + ("The keypad at the front door takes {{ value }}.",),
    updates=UPDATES + ("The building changed the keypad — the code is {{ value }} now.",),
    done="Courier messaged.",
)

FAMILIES: tuple[Family, ...] = (SHIPPING, PHONE, EMAIL, MEAL, PICKUP, MEETING, DOOR)
