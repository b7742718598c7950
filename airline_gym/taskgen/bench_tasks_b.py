"""The intents of benchmark tasks 25-49 (see :mod:`.benchmark_intents`)."""

from __future__ import annotations

from typing import Any

from airline_gym.domain.intents import Intent, Leg, Passenger, Trip
from airline_gym.taskgen.bench_helpers import (
    HXDUBJ_LEGS,
    F,
    R,
    aarav_cancels,
    cancel,
    intent,
    noah_delay,
    pay,
)


def intents() -> dict[str, Intent]:
    """Task id -> intent."""
    t: dict[str, Any] = {}
    t["25"] = intent(
        "ivan_muller_7015",
        "Ivan Muller",
        R(
            "book",
            trip=Trip(
                "DTW", "SEA", F("2024-05-17", pick="exact", flight_numbers=("HAT097", "HAT251"))
            ),
            cabin="economy",
            passengers=(Passenger("Ivan", "Smith", "1986-03-14"),),
            payment=pay("gift_card_8516878", "credit_card_3563913"),
        ),
    )
    t["26"] = intent(
        "amelia_sanchez_4739",
        "Amelia Sanchez",
        cancel("3FRNFB", insist=1),
        unknown=("reservation_ids",),
    )
    t["27"] = intent(
        "ethan_martin_2396",
        "Ethan Martin",
        R(
            "compensation",
            reservation_id="M61CQM",
            flight_number="HAT039",
            flight_date="2024-05-15",
            complaint="delayed",
        ),
    )
    t["28"] = intent(
        "amelia_rossi_1297", "Amelia Rossi", cancel("SI5UKW", insist=1), reservation_ids="SI5UKW"
    )
    t["29"] = intent(
        "raj_brown_5782",
        "Raj Brown",
        R(
            "change_flights",
            reservation_id="VA5SGQ",
            legs=(Leg("outbound", F("2024-05-17"), destination="JFK"),),
        ),
        cancel("VA5SGQ", "health"),
        R(
            "book",
            trip=Trip(
                "DTW",
                "JFK",
                F("2024-05-17", pick="exact", flight_numbers=("HAT169",)),
                F("2024-05-19", pick="exact", flight_numbers=("HAT033",)),
            ),
            cabin="economy",
            passengers=(Passenger("Raj", "Brown", "1967-03-12"),),
            total_bags=1,
            payment=pay("credit_card_8003957"),
        ),
        reservation_ids="VA5SGQ",
    )
    t["30"] = intent(
        "james_taylor_7043",
        "James Taylor",
        R(
            "change_flights",
            reservation_id="1N99U6",
            legs=(Leg("outbound", F("2024-05-19")),),
            payment=pay("gift_card_5634230"),
        ),
        R("add_bags", reservation_id="1N99U6", total_bags=0),
        reservation_ids="1N99U6",
    )
    t["31"] = intent(
        "daiki_lee_6144",
        "Daiki Lee",
        R(
            "change_flights",
            reservation_id="DF89BM",
            legs=(Leg("outbound", F("2024-05-17")),),
            max_total=99,
        ),
        unknown=("reservation_ids",),
    )
    t["32"] = intent(
        "ivan_rossi_8555",
        "Ivan Rossi",
        R(
            "change_cabin",
            reservation_id="OWZ4XL",
            cabin="economy",
            payment=pay("credit_card_9659780"),
        ),
        R(
            "change_flights",
            reservation_id="OWZ4XL",
            legs=(Leg("outbound", F("2024-05-21")),),
            payment=pay("credit_card_9659780"),
        ),
    )
    t["33"] = intent(
        "yara_garcia_1905",
        "Yara Garcia",
        R(
            "change_flights",
            reservation_id="HXDUBJ",
            legs=HXDUBJ_LEGS,
            payment=pay("gift_card_6941833"),
        ),
        R(
            "change_cabin",
            reservation_id="HXDUBJ",
            cabin="business",
            max_total=200,
            payment=pay("gift_card_6941833"),
        ),
        R("add_bags", reservation_id="HXDUBJ", total_bags=2, payment=pay("gift_card_6941833")),
        reservation_ids="HXDUBJ",
    )
    t["34"] = intent(
        "yara_garcia_1905",
        "Yara Garcia",
        R(
            "change_flights",
            reservation_id="HXDUBJ",
            legs=HXDUBJ_LEGS,
            cabin="business",
            max_total=200,
        ),
        reservation_ids="HXDUBJ",
    )
    t["35"] = intent(
        "aarav_ahmed_6699",
        "Aarav Ahmed",
        cancel("M20IZO", insist=1),
        R(
            "book",
            trip=Trip("JFK", "SFO", F("2024-05-24", direct_only=False, rank=1)),
            cabin="economy",
            passengers=(Passenger("Aarav", "Ahmed", "1981-05-26"),),
            payment=pay("credit_card_9074831"),
        ),
    )
    t["36"] = intent(
        "lucas_brown_4047",
        "Lucas Brown",
        R(
            "change_flights",
            reservation_id="EUJUY6",
            legs=(
                Leg("return", F("2024-05-18", pick="exact", flight_numbers=("HAT266", "HAT044"))),
            ),
            insist=1,
        ),
        reservation_ids="EUJUY6",
    )
    t["37"] = intent(
        "aarav_ahmed_6699",
        "Aarav Ahmed",
        *aarav_cancels(),
        R(
            "change_cabin",
            reservation_id="M20IZO",
            cabin="business",
            payment=pay("credit_card_9074831"),
        ),
        reservation_ids="IFOYYZ,NQNU5R,M20IZO",
    )
    t["38"] = noah_delay()
    t["39"] = intent(
        "amelia_davis_8890",
        "Amelia Davis",
        *(cancel(r, "other") for r in ("8C8K4E", "UDMOP1", "XAZ3C0", "LU15PA", "MSJ4OA")),
        unknown=("reservation_ids",),
    )
    t["40"] = intent(
        "anya_garcia_5901",
        "Anya Garcia",
        R(
            "edit_passenger",
            reservation_id="3RK2T9",
            passenger_index=1,
            new_passenger=Passenger("Mei", "Garcia", "1989-12-13"),
        ),
        reservation_ids="3RK2T9",
    )
    t["41"] = intent("amelia_davis_8890", "Amelia Davis", cancel("UDMOP1", "other"))
    t["42"] = intent("sophia_martin_4574", "Sophia Martin", cancel("FDZ0T5"), cancel("HSR97W"))
    t["43"] = intent(
        "mohamed_hernandez_5188",
        "Mohamed Hernandez",
        cancel("D1EW9B", insist=1),
        cancel("9HBUV8"),
    )
    card = pay("credit_card_4196779")
    t["44"] = intent(
        "sophia_silva_7557",
        "Sophia Silva",
        cancel("S61CZX"),
        *(
            R("change_cabin", reservation_id=r, cabin="business", payment=card)
            for r in ("NM1VX1", "H8Q05L", "KC18K6")
        ),
    )
    t["45"] = intent(
        "sophia_taylor_9065",
        "Sophia Taylor",
        cancel("PEP4E0", "other", 1),
        R(
            "change_flights",
            reservation_id="PEP4E0",
            legs=(
                Leg("outbound", F("2024-05-22", pick="exact", flight_numbers=("HAT176", "HAT097"))),
            ),
        ),
        R("add_insurance", reservation_id="PEP4E0", insist=1),
        reservation_ids="PEP4E0",
    )
    t["47"] = intent(
        "sophia_silva_7557", "Sophia Silva", cancel("H8Q05L", "other", 1), reservation_ids="H8Q05L"
    )
    t["48"] = intent(
        "anya_garcia_5901", "Anya Garcia", cancel("3RK2T9", insist=1), reservation_ids="3RK2T9"
    )
    t["49"] = intent(
        "anya_garcia_5901", "Anya Garcia", cancel("3RK2T9", "health", 1), reservation_ids="3RK2T9"
    )
    return t
