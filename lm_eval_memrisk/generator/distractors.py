"""Distractor material: unrelated memory notes, chit-chat turns and greetings."""

from __future__ import annotations

#: Unrelated memory notes: key -> possible values (an update picks another one).
NOTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("t-shirt size", ("large, slim fit", "medium, regular fit", "extra large, relaxed fit")),
    (
        "coffee order",
        ("oat flat white, extra hot", "double espresso, no sugar", "iced latte with vanilla"),
    ),
    (
        "dog's name",
        ("a beagle called Biscuit", "a greyhound called Pepper", "a spaniel called Mabel"),
    ),
    ("gym locker", ("locker 212B", "locker 87C", "locker 149A")),
    ("preferred language", ("European Portuguese", "Brazilian Portuguese", "Swiss German")),
    (
        "newsletter preference",
        ("weekly digest only", "monthly roundup only", "no newsletters at all"),
    ),
    ("parking space", ("bay 14 on level minus two", "bay 3 by the lifts", "bay 27 near the exit")),
    ("book club pick", ("The Left Hand of Darkness", "Piranesi", "The Remains of the Day")),
    ("desk", ("hot desk 3F-17", "desk 2B-04 by the window", "hot desk 5A-11")),
    ("wine preference", ("dry Riesling, nothing oaked", "light Pinot Noir", "crisp Albariño")),
    ("car", ("a blue Skoda Octavia estate", "a grey Toyota Yaris hybrid", "a red Fiat 500")),
    (
        "running goal",
        ("a sub-50-minute 10K", "a half marathon in October", "parkrun every Saturday"),
    ),
    ("favourite podcast", ("Hardcore History", "The Rest Is History", "Song Exploder")),
    ("hobby", ("restoring fountain pens", "bouldering twice a week", "sourdough baking")),
    (
        "houseplant",
        ("a fiddle-leaf fig called Frank", "a monstera by the window", "three cacti on the sill"),
    ),
    ("football team", ("Leeds United", "Bristol Rovers", "Hibernian")),
    ("time zone", ("Europe/Lisbon", "America/Chicago", "Asia/Tokyo")),
    ("dietary note", ("vegetarian on weekdays", "no coriander, ever", "low-salt meals")),
)

NOTE_STATES: tuple[str, ...] = (
    "Random thing to remember: my {{ key }} is {{ value }}.",
    "Can you note that my {{ key }} is {{ value }}?",
    "Oh, and for the record — {{ key }}: {{ value }}.",
    "Unrelated, but please save my {{ key }}: {{ value }}.",
    "Before I forget, my {{ key }} is {{ value }}.",
)
NOTE_UPDATES: tuple[str, ...] = (
    "Actually, my {{ key }} is {{ value }} now.",
    "Update my {{ key }} to {{ value }}, please.",
    "Change of plan on the {{ key }}: it's {{ value }}.",
)

#: Unrelated (user, assistant) exchanges; variables: city, day, mins, age.
CHATTER: tuple[tuple[str, str], ...] = (
    (
        "Any tips for keeping basil alive on a windowsill?",
        "Plenty of light, water when the topsoil is dry, and pinch off the flower buds.",
    ),
    (
        "What's a good podcast genre for a long drive?",
        "Narrative history series work well — long episodes that are easy to follow.",
    ),
    (
        "Is it going to rain in {{ city }} this weekend, do you think?",
        (
            "I can't see a live forecast from here, but {{ city }} weather is changeable — pack a "
            "jacket."
        ),
    ),
    (
        "How long should I boil an egg for a runny yolk?",
        "About six minutes from boiling, then straight into cold water.",
    ),
    (
        "Can you recommend a board game for four adults?",
        "Codenames or Ticket to Ride — both are quick to learn and fun with four.",
    ),
    (
        "What's the difference between a latte and a flat white?",
        "A flat white has less milk and thinner foam, so the coffee tastes stronger.",
    ),
    (
        "Give me a fun fact about octopuses.",
        "They have three hearts, and two of them pause while the octopus swims.",
    ),
    (
        "How do I get a red wine stain out of a carpet?",
        "Blot it, then dab with cold water and a little washing-up liquid — don't rub.",
    ),
    ("What's a nice name for a grey kitten?", "How about Pebble, Smudge or Earl Grey?"),
    (
        "Any ideas for a {{ mins }}-minute workout without equipment?",
        "Cycle squats, push-ups, lunges and planks in 45-second rounds for {{ mins }} minutes.",
    ),
    (
        "Should I learn Spanish or Italian first?",
        "Spanish has more speakers and resources; Italian is lovely if you travel there often.",
    ),
    (
        "How do you remember names at networking events?",
        "Repeat the name straight away and link it to something about the person.",
    ),
    (
        "Can you suggest a book for a rainy {{ day }}?",
        "A cosy classic mystery suits a rainy {{ day }} — Agatha Christie never fails.",
    ),
    (
        "What's the best way to reheat pizza?",
        "In a hot frying pan with a lid for a few minutes; the base stays crisp.",
    ),
    (
        "Why do cats knead blankets?",
        "It's a comfort behaviour from kittenhood, and it marks the spot with their scent.",
    ),
    (
        "Is {{ city }} worth a day trip?",
        "Definitely — wander the old centre, find a good café and leave time for a long walk.",
    ),
    (
        "Quick one: how do you say thank you in Japanese?",
        "Arigatō — or arigatō gozaimasu to be more polite.",
    ),
    (
        "What should I plant in a shady garden bed?",
        "Ferns, hostas and foxgloves all cope well with shade.",
    ),
    (
        "Any tips for a first half marathon?",
        "Build mileage slowly, rehearse your race-day breakfast and start slower than you think.",
    ),
    (
        "What's a good houseplant for a dark room?",
        "A snake plant or a ZZ plant will put up with low light.",
    ),
    (
        "How do I stop my glasses fogging up?",
        "A drop of washing-up liquid, rubbed on and buffed off, works surprisingly well.",
    ),
    (
        "Can you recommend a film for {{ day }} night?",
        "A twisty heist film is perfect for a {{ day }} night.",
    ),
    (
        "What's the trick to fluffy rice?",
        "Rinse it well, use the right water ratio and let it rest covered for ten minutes.",
    ),
    (
        "How do I keep cut flowers fresh for longer?",
        "Trim the stems at an angle and change the water every couple of days.",
    ),
    (
        "Any theme ideas for a {{ age }}th birthday party?",
        "A retro games night or a garden picnic both work well for a {{ age }}th.",
    ),
    (
        "What's a polite way to decline a meeting?",
        "Thank them, say you can't make it, and offer an alternative or ask for notes.",
    ),
    (
        "Tell me a short joke.",
        "Why did the scarecrow win an award? He was outstanding in his field.",
    ),
    (
        "Is it better to stretch before or after running?",
        "Dynamic stretches before, static ones after.",
    ),
    ("Why is the sky blue?", "Air scatters short blue wavelengths of sunlight more than red ones."),
    (
        "How often should I descale the kettle?",
        "Every month or so in a hard-water area; less often elsewhere.",
    ),
    (
        "What's a quick dessert with three ingredients?",
        "Banana, dark chocolate and yoghurt make a decent frozen bark.",
    ),
    (
        "Do you think I should get a standing desk?",
        "It can help if you alternate — the point is changing position, not standing all day.",
    ),
    (
        "What's the etiquette for tipping in {{ city }} restaurants?",
        "Around ten to twelve percent is typical unless service is already included.",
    ),
    (
        "I can't decide between a {{ day }} hike or a museum. Thoughts?",
        "If the weather holds, hike; save the museum for a grey day.",
    ),
)

GREETINGS: tuple[str, ...] = (
    "Hi!",
    "Morning!",
    "Hello there.",
    "Hey — quick one.",
    "Good afternoon!",
    "Evening!",
    "Hi, hope you're well.",
    "Hello!",
)
