"""Entity pools: names, places, companies and task objects the templates draw from.

Plain tuples only (ordered, immutable), so a seeded RNG always picks the same entry.
"""

from __future__ import annotations

FIRST_NAMES: tuple[str, ...] = (
    "Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiroshi", "Ines",
    "Jonas", "Kemi", "Lars", "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Samir",
    "Tove", "Umar", "Valentina", "Wes", "Ximena", "Yusuf", "Zofia", "Amara", "Benedikt",
    "Carmen", "Deniz", "Elif", "Felix", "Hana", "Idris", "Jasmin", "Kofi", "Lena", "Mateo",
    "Noor", "Oskar", "Priya", "Rafael", "Sunniva", "Tomasz", "Aiko", "Callum", "Dalia",
    "Emeka", "Freya", "Gustavo", "Helga", "Isaac", "Keiko", "Leon", "Mirela", "Nadia",
)  # fmt: skip

LAST_NAMES: tuple[str, ...] = (
    "Moreno", "Okafor", "Lindqvist", "Tanaka", "Novak", "Haddad", "Fischer", "Costa",
    "Brennan", "Kowalski", "Achebe", "Sato", "Duarte", "Varga", "Holm", "Rahman", "Whitfield",
    "Ferreira", "Nakamura", "Petrov", "Castellano", "Osei", "Larsen", "Marchetti", "Singh",
    "Dubois", "Eriksen", "Mensah", "Quiroga", "Halloran", "Byrne", "Yilmaz", "Kaur",
    "Albrecht", "Vasquez", "Ndiaye", "Sorensen", "Abara", "Lindgren", "Pereira", "Hale",
    "Rossi", "Ivanova", "Kim", "Mahlaba", "Oyelaran", "Strand", "Takahashi", "Weiss",
)  # fmt: skip

#: Workspaces: (display name, email domain).
COMPANIES: tuple[tuple[str, str], ...] = (
    ("Acme", "acme-logistics.com"), ("Globex", "globex.io"), ("Northwind", "northwind.co.uk"),
    ("Initech", "initech.net"), ("Tailspin", "tailspin-air.com"), ("Fabrikam", "fabrikam.eu"),
    ("Contoso", "contoso.org"), ("Litware", "litware.dev"), ("Woodgrove", "woodgrove-bank.com"),
    ("Proseware", "proseware.io"), ("Adatum", "adatum.co"), ("Wingtip", "wingtip-toys.com"),
    ("Kestrel", "kestrel-analytics.com"), ("Meridian", "meridianfreight.com"),
    ("Oakleaf", "oakleaf.studio"), ("Copperline", "copperline.net"),
    ("Brightwater", "brightwater.health"), ("Sable", "sable-systems.com"),
    ("Quarry Hill", "quarryhill.org.uk"), ("Lucerne", "lucerne-publishing.com"),
    ("Bluebird", "bluebird-labs.io"), ("Tidewater", "tidewater.energy"),
)  # fmt: skip

#: Personal mail hosts (fictional).
MAIL_HOSTS: tuple[str, ...] = (
    "postbox.net", "mailhub.io", "letterbox.co.uk", "inbox.example.org", "fastpost.eu",
    "quillmail.com", "homemail.uk",
)  # fmt: skip

STREETS: tuple[str, ...] = (
    "Birch", "Elm", "Harbour", "Mill", "Station", "Chapel", "Orchard", "Kingfisher", "Rowan",
    "Foundry", "Willow", "Clarendon", "Hawthorn", "Cromwell", "Larch", "Quayside", "Tanner",
    "Juniper", "Marlowe", "Bellfield", "Ashgrove", "Weaver", "Copper", "Heron", "Linden",
    "Priory", "Sandpiper", "Thistle", "Wharf", "Beacon",
)  # fmt: skip
STREET_SUFFIXES: tuple[str, ...] = (
    "Lane", "Road", "Street", "Avenue", "Close", "Crescent", "Way", "Terrace", "Row", "Gardens",
)  # fmt: skip

#: UK towns with their postcode area.
UK_CITIES: tuple[tuple[str, str], ...] = (
    ("Leeds", "LS"), ("Bristol", "BS"), ("Manchester", "M"), ("York", "YO"), ("Cardiff", "CF"),
    ("Glasgow", "G"), ("Edinburgh", "EH"), ("Norwich", "NR"), ("Brighton", "BN"),
    ("Oxford", "OX"), ("Cambridge", "CB"), ("Sheffield", "S"), ("Nottingham", "NG"),
    ("Exeter", "EX"), ("Bath", "BA"), ("Liverpool", "L"), ("Newcastle", "NE"),
    ("Leicester", "LE"), ("Dundee", "DD"), ("Belfast", "BT"),
)  # fmt: skip
DE_STREETS: tuple[str, ...] = (
    "Kastanienallee", "Lindenstraße", "Bergmannstraße", "Schillerweg", "Rosenthaler Straße",
    "Am Hafen", "Gartenstraße", "Mühlenweg",
)  # fmt: skip
DE_CITIES: tuple[str, ...] = ("Berlin", "Hamburg", "Köln", "Leipzig", "München", "Bremen")
NL_STREETS: tuple[str, ...] = ("Keizersgracht", "Prinsenstraat", "Oudegracht", "Lange Voorhout")
NL_CITIES: tuple[str, ...] = ("Amsterdam", "Utrecht", "Den Haag", "Haarlem")
US_CITIES: tuple[tuple[str, str], ...] = (
    ("Portland", "OR"), ("Madison", "WI"), ("Austin", "TX"), ("Boulder", "CO"),
    ("Savannah", "GA"), ("Burlington", "VT"),
)  # fmt: skip

CARD_BRANDS: tuple[str, ...] = (
    "Visa", "Visa debit", "Mastercard", "Amex", "Monzo Mastercard", "Revolut Visa",
)  # fmt: skip
BANK_CODES: tuple[str, ...] = ("NWBK", "BARC", "LOYD", "HBUK", "MIDL", "CPBK", "SRLG", "TSBS")

DRUGS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("Lisinopril", (5, 10, 20)), ("Atorvastatin", (10, 20, 40)), ("Metformin", (500, 850)),
    ("Sertraline", (50, 100)), ("Levothyroxine", (25, 50, 75)), ("Amlodipine", (5, 10)),
    ("Omeprazole", (20, 40)), ("Propranolol", (10, 40, 80)), ("Cetirizine", (10,)),
    ("Ramipril", (2, 5, 10)),
)  # fmt: skip
DOSE_TIMES: tuple[str, ...] = ("once daily", "twice daily", "at bedtime", "every morning")
PHARMACIES: tuple[str, ...] = (
    "Boots on the High Street", "the Lloyds pharmacy by the station", "Well Pharmacy",
    "the Superdrug pharmacy", "the hospital outpatient pharmacy", "Rowlands Pharmacy",
)  # fmt: skip

PRODUCTS: tuple[str, ...] = (
    "trail running shoes", "noise-cancelling headphones", "cast-iron skillet", "desk lamp",
    "yoga mat", "espresso grinder", "hiking backpack", "wool throw blanket", "mechanical keyboard",
    "children's atlas", "bird feeder", "standing desk converter", "rain jacket", "board game",
    "electric kettle", "chef's knife", "bike pump", "bluetooth speaker", "linen duvet cover",
    "houseplant starter kit", "watercolour set", "ergonomic chair cushion", "camping stove",
    "set of wine glasses",
)  # fmt: skip
DOCUMENTS: tuple[str, ...] = (
    "signed lease", "Q3 budget draft", "travel itinerary", "board meeting minutes",
    "insurance renewal", "conference badge", "project proposal", "warranty certificate",
    "tax summary", "onboarding checklist", "event seating plan", "grant application",
    "supplier contract", "photo release form", "quarterly report", "renovation quote",
)  # fmt: skip
MEETINGS: tuple[str, ...] = (
    "design review", "budget check-in", "one-to-one", "sprint planning", "client catch-up",
    "hiring debrief", "roadmap sync", "vendor call", "mentoring session", "launch retro",
    "security review", "content planning",
)  # fmt: skip
PURCHASES: tuple[tuple[str, str], ...] = (
    ("the concert tickets", "86.00"), ("the annual museum membership", "65.00"),
    ("the replacement phone screen", "129.99"), ("the cooking class", "45.00"),
    ("the train tickets to Edinburgh", "112.40"), ("the new running watch", "219.00"),
    ("the online course", "59.00"), ("the flower delivery", "38.50"),
    ("the theatre tickets", "74.00"), ("the language app subscription", "95.88"),
    ("the conference pass", "349.00"), ("the spa voucher", "120.00"),
)  # fmt: skip
TRANSFERS: tuple[tuple[str, str], ...] = (
    ("March freelance invoice", "1450.00"), ("rent share", "725.00"),
    ("consulting retainer", "2100.00"), ("photography fee", "380.00"),
    ("quarterly commission", "960.00"), ("translation job", "540.00"),
    ("workshop honorarium", "300.00"), ("royalty payment", "812.35"),
)  # fmt: skip
ROUTES: tuple[str, ...] = (
    "London to Lisbon", "Manchester to Copenhagen", "Edinburgh to Amsterdam",
    "Bristol to Barcelona", "Dublin to Boston", "London to Oslo", "Glasgow to Reykjavik",
    "Birmingham to Milan", "Leeds to Dublin", "London to Vienna",
)  # fmt: skip
TRAVEL_DATES: tuple[str, ...] = (
    "next Tuesday", "the 14th", "Friday morning", "the first weekend of next month",
    "Thursday evening", "the 22nd", "Monday", "the Sunday after next",
)  # fmt: skip
SERVICES: tuple[str, ...] = (
    "Slack alerts", "Stripe webhooks", "the GitHub Actions deploy", "the Zapier workflow",
    "the status page", "the Sentry integration", "the nightly export job", "the CRM sync",
)  # fmt: skip
REMINDER_TASKS: tuple[str, ...] = (
    "file the VAT return", "submit the grant report", "renew the passport",
    "send the conference abstract", "finish the annual review", "pay the council tax",
    "hand in the dissertation chapter", "deliver the client mock-ups", "renew the car insurance",
    "submit the expense claims",
)  # fmt: skip
HOTELS: tuple[tuple[str, str], ...] = (
    ("Hotel Lumen", "Rotterdam"), ("The Tanner House", "Bath"), ("Casa Oliva", "Lisbon"),
    ("Nordlys Hotel", "Bergen"), ("The Wharf Inn", "Bristol"), ("Hotel Aurelia", "Milan"),
    ("The Grainstore", "Edinburgh"), ("Parkside Suites", "Copenhagen"),
)  # fmt: skip
HOTEL_PROGRAMMES: tuple[str, ...] = (
    "Marlow Rewards", "Harbour Club", "Linden Stays", "Aurora Points", "Keystone Circle",
)  # fmt: skip
RESTAURANTS: tuple[str, ...] = (
    "Little Saigon Kitchen", "Nonna's Table", "The Green Fork", "Bombay Street Café",
    "Sakura Bento", "El Fogón", "Harvest Bowl Co.", "The Dumpling House",
)  # fmt: skip
DISHES: tuple[str, ...] = (
    "falafel wrap with tahini", "miso ramen with tofu", "chicken shawarma plate",
    "mushroom risotto", "grilled halloumi salad", "beef pho", "vegetable katsu curry",
    "lentil dal with rice", "margherita pizza", "salmon poke bowl", "bibimbap with egg",
    "pulled jackfruit burrito", "Greek chicken souvlaki", "butternut squash soup",
)  # fmt: skip
#: Allergen -> dishes that contain the allergen's name as a word.
ALLERGEN_DISHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("peanut", ("chicken satay with peanut sauce", "peanut noodle salad", "Thai peanut curry")),
    ("prawn", ("prawn laksa", "garlic prawn linguine", "prawn pad thai")),
    ("sesame", ("sesame chicken", "sesame-crusted tuna", "sesame noodle bowl")),
    ("cashew", ("cashew chicken stir-fry", "cashew korma", "cashew pesto pasta")),
)  # fmt: skip
RIDE_DESTINATIONS: tuple[str, ...] = (
    "the airport", "the conference centre", "the train station", "the client's office",
    "the hospital", "the stadium", "the ferry terminal", "the city museum",
)  # fmt: skip
#: v6: only places a driver can find from the name ("the client's office" names none).
KNOWN_RIDE_DESTINATIONS: tuple[str, ...] = tuple(
    "the central library" if d == "the client's office" else d for d in RIDE_DESTINATIONS
)
PICKUP_SPOTS: tuple[str, ...] = (
    "Gate B", "the north entrance", "the loading bay", "the side door", "the car park barrier",
    "the main reception", "the bike shelter", "the east lobby",
)  # fmt: skip
AIRLINES: tuple[str, ...] = (
    "SkyJet", "Nordwind Air", "Celtic Wings", "Aerolux", "Baltic Blue", "Iberia Express",
    "Transalp", "Atlantic Bridge",
)  # fmt: skip
RELATIONS: tuple[str, ...] = ("sister", "partner", "neighbour", "brother", "friend", "cousin")
MONTHS: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
WEEKDAYS: tuple[str, ...] = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
MEETING_TIMES: tuple[str, ...] = (
    "08:30", "09:00", "09:30", "10:00", "10:30", "11:00", "11:30", "13:00", "13:30", "14:00",
    "14:30", "15:00", "15:30", "16:00", "16:30",
)  # fmt: skip
