"""The intents of benchmark tasks 0-24 (see :mod:`.benchmark_intents`)."""

from __future__ import annotations

from typing import Any

from airline_gym.domain.intents import Intent, Leg, Passenger, Trip
from airline_gym.taskgen.bench_helpers import (
    LIAM,
    MOHAMED,
    RAJ,
    F,
    R,
    aarav_cancels,
    cancel,
    change_m05knl,
    intent,
    mohamed,
    mohamed_book,
    noah_delay,
    omar,
    omar_davis,
    pay,
)


def intents() -> dict[str, Intent]:
    """Task id -> intent."""
    t: dict[str, Any] = {}
    t["0"] = intent(
        "emma_kim_9957", "Emma Kim", cancel("EHGLP3", "other", 1), reservation_ids="EHGLP3"
    )
    t["1"] = intent(
        "raj_sanchez_7340",
        "Raj Sanchez",
        cancel("Q69X3R", "other", 1),
        unknown=("reservation_ids",),
    )
    t["2"] = noah_delay()
    t["3"] = intent(
        "anya_garcia_5901",
        "Anya Garcia",
        R("info", question="bag_allowance", reservation_id="JMO1MG"),
        reservation_ids="JMO1MG",
    )
    t["4"] = intent(
        "sophia_silva_7557", "Sophia Silva", R("compensation", complaint="cancelled", insist=1)
    )
    t["5"] = intent(
        "mei_brown_7075",
        "Mei Brown",
        R(
            "compensation",
            reservation_id="3JA7XV",
            flight_number="HAT045",
            flight_date="2024-05-15",
            complaint="delayed",
            insist=1,
        ),
    )
    t["6"] = intent(
        "sophia_taylor_9065",
        "Sophia Taylor",
        R("add_insurance", reservation_id="PEP4E0", insist=1),
        reservation_ids="PEP4E0",
    )
    t["7"] = intent(
        "daiki_muller_1116",
        "Daiki Muller",
        R("info", question="total_upcoming_cost"),
        R(
            "change_cabin",
            reservation_id="XEHM4B",
            cabin="business",
            payment=pay("credit_card_2408938"),
        ),
        cancel("XEHM4B", "health"),
        cancel("59XX6W", "health"),
        reservation_ids="XEHM4B,59XX6W",
    )
    t["8"] = intent(
        "sophia_silva_7557",
        "Sophia Silva",
        R(
            "book",
            trip=Trip("ORD", "PHL", F("2024-05-26", pick="exact", flight_numbers=("HAT271",))),
            cabin="economy",
            passengers=(
                Passenger("Sophia", "Silva", "1957-10-05"),
                Passenger("Kevin", "Smith", "2001-04-12"),
            ),
            payment=pay("certificate_8045380"),
            max_total=500,
        ),
    )
    t["9"] = intent(
        "aarav_ahmed_6699",
        "Aarav Ahmed",
        *aarav_cancels(),
        R(
            "change_flights",
            reservation_id="M20IZO",
            legs=(Leg("outbound", F("2024-05-22")),),
            payment=pay("credit_card_9074831"),
        ),
        reservation_ids="IFOYYZ,NQNU5R,M20IZO",
    )
    t["10"] = intent(
        "liam_khan_2521",
        "Liam Khan",
        R(
            "change_flights",
            reservation_id="4NQLHD",
            cabin="business",
            legs=(Leg("outbound", F("2024-05-24", direct_only=False)),),
            max_total=999,
        ),
    )
    gv1n64 = (
        Passenger("James", "Patel", "1995-04-07"),
        Passenger("James", "Sanchez", "1956-08-18"),
    )
    t["11"] = intent(
        "james_patel_9828",
        "James Patel",
        R("change_count", reservation_id="GV1N64", passengers=gv1n64),
        R(
            "change_cabin",
            reservation_id="GV1N64",
            cabin="basic_economy",
            payment=pay("gift_card_1642017"),
        ),
        R("info", question="change_total"),
        reservation_ids="GV1N64",
    )
    t["12"] = intent(
        "chen_lee_6825",
        "Chen Lee",
        R(
            "change_cabin",
            reservation_id="YAX4DR",
            cabin="business",
            max_total=650,
            payment=pay("credit_card_4938634"),
        ),
        R("add_bags", reservation_id="YAX4DR", total_bags=2, payment=pay("credit_card_4938634")),
        reservation_ids="YAX4DR",
    )
    t["13"] = intent(
        "james_lee_6136",
        "James Lee",
        R(
            "change_flights",
            reservation_id="XEWRD9",
            legs=(Leg("return", F("2024-05-21"), destination="LAS"),),
            max_total=100,
        ),
        reservation_ids="XEWRD9",
    )
    t["14"] = mohamed(
        mohamed_book(
            (MOHAMED, RAJ, LIAM),
            "certificate_3765853",
            "gift_card_8020792",
            "gift_card_6136092",
            "credit_card_2198526",
        )
    )
    t["15"] = t["16"] = change_m05knl()
    t["17"] = t["22"] = omar()
    t["18"] = omar_davis()
    t["19"] = intent(
        "olivia_gonzalez_2305",
        "Olivia Gonzalez",
        R(
            "change_flights",
            reservation_id="Z7GOZK",
            legs=(Leg("return", F("2024-05-28", pick="latest")),),
        ),
        cancel("Z7GOZK", "health"),
        unknown=("reservation_ids",),
    )
    t["20"] = intent(
        "mia_li_3668",
        "Mia Li",
        R(
            "book",
            trip=Trip("JFK", "SEA", F("2024-05-20", direct_only=False, depart_after="11:00:00")),
            cabin="economy",
            passengers=(Passenger("Mia", "Li", "1990-04-05"),),
            total_bags=3,
            payment=pay("certificate_7504069", "credit_card_4421486"),
        ),
    )
    t["21"] = intent(
        "sofia_kim_7287",
        "Sofia Kim",
        R(
            "change_flights",
            reservation_id="OBUT9V",
            legs=(Leg("return", F("2024-05-27", pick="fastest", direct_only=False)),),
            payment=pay("gift_card_6276644"),
        ),
        R("add_bags", reservation_id="OBUT9V", total_bags=2, payment=pay("gift_card_6276644")),
        unknown=("reservation_ids",),
    )
    h9zu1c = (
        Passenger("James", "Moore", "1977-02-03"),
        Passenger("Amelia", "Sanchez", "1968-08-24"),
    )
    t["23"] = mohamed(
        mohamed_book(
            (MOHAMED,),
            "certificate_3765853",
            "gift_card_8020792",
            "gift_card_6136092",
            "credit_card_2198526",
        ),
        mohamed_book((RAJ,), "certificate_9984806", "credit_card_2198526"),
        mohamed_book((LIAM,), "certificate_2765295", "credit_card_2198526"),
    )
    t["24"] = intent(
        "mia_kim_4397",
        "Mia Kim",
        R("change_count", reservation_id="H9ZU1C", passengers=h9zu1c),
        cancel("H9ZU1C"),
        R(
            "book",
            trip=Trip("JFK", "SEA", F("2024-05-20"), F("2024-05-25")),
            cabin="basic_economy",
            passengers=(Passenger("Mia", "Kim", "1965-06-09"),),
            total_bags=1,
            payment=pay("gift_card_7359776", "gift_card_7773485"),
        ),
        reservation_ids="H9ZU1C",
    )
    return t
