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

# -- v2: wider pools (v1 draws from the pools above only, so its bytes stay the same) ----

EXTRA_NOTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shoe size", ("EU 42, wide fit", "UK 7 and a half", "US 10, narrow")),
    ("allergy note", ("mild hay fever in June", "sensitive to penicillin", "no known allergies")),
    ("gym class", ("spin on Tuesday evenings", "yoga flow on Sunday mornings", "boxfit at lunchtime")),
    ("favourite cuisine", ("Georgian food", "Sichuan cooking", "Lebanese mezze")),
    ("bike", ("a green Brompton folding bike", "an old steel Peugeot racer", "a cargo bike with a box")),
    ("reading goal", ("twenty books this year", "one classic a month", "a poetry book every week")),
    ("streaming service", ("the documentary channel", "the anime subscription", "the sports package")),
    ("tea order", ("builder's tea, two sugars", "green tea, no milk", "chai with oat milk")),
    ("holiday plan", ("a week in the Azores", "walking in the Dolomites", "a train trip to Vienna")),
    ("instrument", ("learning the cello", "plays the ukulele badly", "back to the piano after years")),
    ("plant care", ("water the orchid on Sundays", "repot the basil in spring", "mist the ferns daily")),
    ("pet vet", ("the vet on Mill Road", "the 24-hour animal clinic", "the mobile vet service")),
    ("podcast speed", ("1.5x for interviews", "normal speed only", "2x for news")),
    ("board game", ("Wingspan with the neighbours", "chess on Thursdays", "Carcassonne at Christmas")),
    ("sleep routine", ("lights out by eleven", "no screens after ten", "a short nap after lunch")),
)  # fmt: skip

EXTRA_CHATTER: tuple[tuple[str, str], ...] = (
    ("What's a good stretch for a stiff neck?", "Slow chin tucks and gentle side tilts, held for a few breaths."),
    ("How do I keep avocados from browning?", "A squeeze of lemon and cling film pressed right onto the flesh."),
    ("Any idea why my sourdough is flat?", "Usually an underactive starter or over-proofing; try a shorter rise."),
    ("Which is better for a beginner, a kindle or paper books?", "Paper is lovely, but an e-reader makes it easy to carry lots."),
    ("How many cups of coffee is too many?", "Most guidance puts it around four a day for healthy adults."),
    ("Suggest a name for a sourdough starter.", "Bread Pitt is a classic; Clint Yeastwood is a close second."),
    ("How do I clean a cast-iron pan?", "Hot water and a brush, dry it on the hob, then a thin coat of oil."),
    ("What's the rule for capital letters in titles?", "Capitalise the main words; small words stay lower case unless first."),
    ("Is it worth learning to touch type?", "Yes — a few weeks of practice pays off every day after."),
    ("How long do I rest a steak?", "About half the cooking time, loosely covered."),
    ("What's a fun fact about {{ city }}?", "{{ city }} has more history per street than you'd expect — ask a local guide."),
    ("Any tips for a long-haul flight?", "Stay hydrated, walk the aisle now and then and adjust to local time early."),
    ("How do I stop my cat scratching the sofa?", "Give it a tall scratching post nearby and reward it for using it."),
    ("What's a quick healthy lunch?", "A grain bowl with beans, greens and a good dressing takes ten minutes."),
    ("How do I get better at remembering what I read?", "Write a two-line summary after each chapter."),
    ("Can you recommend a hobby for winter evenings?", "Knitting, jigsaws or learning to draw — all easy to pick up."),
    ("How often should I water succulents?", "Only when the soil is completely dry, often every two weeks."),
    ("Why do onions make you cry?", "Cutting them releases a compound that irritates the eyes."),
    ("Any tips for a {{ mins }}-minute power nap?", "Set an alarm, lie down somewhere dim and don't go past {{ mins }} minutes."),
    ("What should I pack for a {{ day }} picnic?", "Sandwiches, fruit, something cold to drink and a blanket."),
    ("How do I say cheers in German?", "Prost — and look people in the eye when you clink."),
    ("What's a good warm-up before a run?", "Five minutes of easy jogging, then leg swings and a few strides."),
    ("How can I make my small flat feel bigger?", "Mirrors, light colours and fewer but larger pieces of furniture."),
    ("Is it worth buying a bread maker?", "If you bake weekly, yes; otherwise a good oven does the job."),
    ("What's the best way to learn chess openings?", "Pick one for white and one for black and learn the ideas, not moves."),
    ("Give me a tongue twister.", "Red lorry, yellow lorry — say it five times fast."),
    ("How do I remove a sticker residue?", "A little cooking oil, left for a minute, then wipe it off."),
    ("What's a good gift for a {{ age }}th birthday?", "An experience they'll remember — a tasting or a day out."),
    ("How do I pick a ripe melon?", "It should feel heavy and smell sweet at the stem end."),
    ("Why do we get hiccups?", "A sudden spasm of the diaphragm; they usually pass on their own."),
)  # fmt: skip

EXTRA_GREETINGS: tuple[str, ...] = (
    "Hiya.", "Good morning!", "Hey there!", "Hello again.", "Afternoon!", "Hi, me again.",
)  # fmt: skip
