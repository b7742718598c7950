"""Rules for changes to an existing reservation: flights, cabin, bags, passengers, insurance.

Each rule cites the policy clause ("Modify flight") it implements, in our words.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from airline_gym.domain.decisions import Decision
from airline_gym.domain.fares import nonfree_after_adding, segment_price
from airline_gym.domain.flight_options import itinerary_connects
from airline_gym.domain.records import Record
from airline_gym.taskgen.context import Context, SolverError
from airline_gym.taskgen.facts import (
    BAG_FEE,
    FLOWN,
    call,
    directions,
    flown_segments,
    free_bags,
    searches,
    status_of,
    user_read,
)


def _charge(ctx: Context, reservation: Record, total: int) -> tuple[str | None, Decision | None]:
    """The payment id for a change costing ``total``, or why it cannot be charged.

    Policy: a change is paid or refunded on a single gift card or credit card of the profile.
    """
    payment_id = ctx.payment_id(reservation)
    methods = ctx.user(reservation["user_id"])["payment_methods"]
    if payment_id is None:
        return None, ctx.decide("declined", "no gift card or credit card named for the change")
    method = methods.get(payment_id)
    if method is None:
        return None, ctx.decide("refused", "the payment method must be in the profile")
    if method["source"] == "certificate":
        return None, ctx.decide("refused", "changes are paid with a gift card or credit card")
    if method["source"] == "gift_card" and method["amount"] < total:
        return None, ctx.decide("declined", f"the gift card {payment_id} cannot cover {total}")
    return payment_id, None


def _payment(
    ctx: Context, reservation: Record, total: int, costs: str, reads: list[Any]
) -> tuple[str | None, Decision | None]:
    """The payment id for a change costing ``total`` (``costs``: what the change is, said in a
    decline), or the decision when it is over the customer's cap or cannot be charged."""
    cap = ctx.request.max_total
    if cap is not None and total > cap:
        clause = f"{costs} {total}, over the customer's cap"
        return None, ctx.decide("declined", clause, reads, amount=total)
    payment_id, problem = _charge(ctx, reservation, total)
    if problem is not None:
        return None, ctx.decide(problem.outcome, problem.clause, reads, amount=total)
    return payment_id, None


def _new_price(ctx: Context, reservation: Record, cabin: str, flight: dict[str, str]) -> int:
    """What the tool charges for one segment (:func:`~airline_gym.domain.fares.segment_price`:
    a kept segment in the same cabin keeps its price)."""
    price = segment_price(ctx.db, reservation, cabin, flight)
    if price is None:
        raise SolverError(f"request {ctx.index}: {flight} cannot be priced")
    return price


def _update(
    ctx: Context, reservation: Record, cabin: str, flights: list[dict[str, str]], reads: list[Any]
) -> Decision:
    """Price a new itinerary/cabin and write it, within the customer's cap and payment."""
    passengers = len(reservation["passengers"])
    old = sum(int(s["price"]) for s in reservation["flights"]) * passengers
    total = sum(_new_price(ctx, reservation, cabin, f) for f in flights) * passengers - old
    payment_id, refused = _payment(ctx, reservation, total, "the change costs", reads)
    if refused is not None:
        return replace(refused, details={"flights": flights, "cabin": cabin})
    write = call(
        "update_reservation_flights",
        reservation_id=reservation["reservation_id"],
        cabin=cabin,
        flights=flights,
        payment_id=payment_id,
    )
    details = {
        "flights": [f["flight_number"] for f in flights],
        "total": total,
        "payments": {payment_id: total} if total else {},
    }
    clause = "the difference is paid or refunded on one gift card or credit card"
    return ctx.decide("granted", clause, reads, [write], amount=total, details=details)


def change_flights(ctx: Context) -> Decision:
    """Policy "Change flights": never basic economy; origin, destination and trip type stay; the
    new flights are the customer's rule's pick; kept segments keep their price."""
    request = ctx.request
    reservation, refusal = ctx.reservation()
    if reservation is None:
        return refusal  # type: ignore[return-value]
    rid = reservation["reservation_id"]
    reads: list[Any] = ctx.reservation_reads(rid)
    if reservation["cabin"] == "basic_economy":
        return ctx.decide("refused", "basic economy flights cannot be modified", reads)
    parts = directions(reservation)
    segments = reservation["flights"]
    ends = {"outbound": reservation["destination"], "return": reservation["origin"]}
    for leg in request.legs:
        if not parts[leg.direction]:
            return ctx.decide("refused", "the trip type stays the same", reads)
        if leg.destination is not None and leg.destination != ends[leg.direction]:
            return ctx.decide("refused", "origin and destination cannot be changed", reads)
    flown = {(s["flight_number"], s["date"]) for s in flown_segments(ctx.db, reservation)}
    for leg in request.legs:
        if any(
            (segments[i]["flight_number"], segments[i]["date"]) in flown
            for i in parts[leg.direction]
        ):
            return ctx.decide("refused", "a flight already flown cannot be changed", reads)
    if not request.legs:
        raise SolverError(f"request {ctx.index}: change_flights needs legs")
    cabin = request.cabin or reservation["cabin"]
    passengers = len(reservation["passengers"])
    reads.append(user_read(reservation["user_id"]))
    chosen = {leg.direction: leg.rule for leg in request.legs}
    flights: list[dict[str, str]] = []
    kept = [segments[i] for d in ("outbound", "return") if d not in chosen for i in parts[d]]
    if cabin != reservation["cabin"]:
        blocker = _reprice_blocker(ctx, reservation, cabin, kept, reads)
        if blocker is not None:
            return blocker
        reads += _price_searches(kept)
    for direction in ("outbound", "return"):
        indexes = parts[direction]
        if not indexes:
            continue
        if direction not in chosen:
            flights += [
                {"flight_number": segments[i]["flight_number"], "date": segments[i]["date"]}
                for i in indexes
            ]
            continue
        rule = chosen[direction]
        origin, destination = segments[indexes[0]]["origin"], segments[indexes[-1]]["destination"]
        reads += searches(origin, destination, rule)
        option = ctx.choose(origin, destination, rule, cabin, passengers)
        if option is None or (rule.max_price is not None and option.price(cabin) > rule.max_price):
            rest = [
                (segments[parts[d][0]]["origin"], segments[parts[d][-1]]["destination"], chosen[d])
                for d in ("return",)
                if direction == "outbound" and d in chosen and parts[d]
            ]
            ctx.note_ties(rest, cabin, passengers)
        if option is None:
            return ctx.decide("declined", "no available flight fits the customer's rule", reads)
        if rule.max_price is not None and option.price(cabin) > rule.max_price:
            offered = {"flights": flights + option.flights, "cabin": cabin}
            clause = "the flight costs more than the customer's cap"
            return ctx.decide("declined", clause, reads, details=offered)
        flights += option.flights
    kept_keys = {(s["flight_number"], s["date"]) for s in kept}
    new = {(f["flight_number"], f["date"]) for f in flights} - kept_keys
    if not itinerary_connects(ctx.db, flights, new):
        ctx.ill_posed.append("a new flight leaves before the flight before it arrives")
        return ctx.decide("declined", "the new flights would not follow one another", reads)
    current = [{"flight_number": s["flight_number"], "date": s["date"]} for s in segments]
    if flights == current and cabin == reservation["cabin"]:
        return ctx.decide("declined", "the customer's rule picks the flights they have", reads)
    return _update(ctx, reservation, cabin, flights, reads)


def _reprice_blocker(
    ctx: Context, reservation: Record, cabin: str, segments: list[Record], reads: list[Any]
) -> Decision | None:
    """Why segments cannot be repriced in a new cabin, if they cannot: a flown one (policy: no
    cabin change once a flight was flown), one no longer bookable, or too few seats."""
    passengers = len(reservation["passengers"])
    statuses = [status_of(ctx.db, s["flight_number"], s["date"]) for s in segments]
    if FLOWN.intersection(statuses):
        return ctx.decide("refused", "the cabin cannot change once a flight was flown", reads)
    for s, status in zip(segments, statuses, strict=True):
        if status != "available":
            return ctx.decide("refused", "every flight must be bookable to change cabin", reads)
        seats = ctx.db.flight(s["flight_number"])["dates"][s["date"]]["available_seats"]  # type: ignore[index]
        if seats[cabin] < passengers:
            return ctx.decide("declined", "not enough seats in that cabin", reads)
    return None


def _price_searches(segments: list[Record]) -> list[Any]:
    """The searches that show each segment's price today (one direct search per segment)."""
    return [
        call(
            "search_direct_flight", origin=s["origin"], destination=s["destination"], date=s["date"]
        )
        for s in segments
    ]


def change_cabin(ctx: Context) -> Decision:
    """Policy "Change cabin": not once any flight was flown; else the whole reservation, same
    flights (basic economy included), the difference paid or refunded."""
    reservation, refusal = ctx.reservation()
    if reservation is None:
        return refusal  # type: ignore[return-value]
    cabin = ctx.request.cabin
    if cabin is None:
        raise SolverError(f"request {ctx.index}: change_cabin needs a cabin")
    reads: list[Any] = ctx.reservation_reads(reservation["reservation_id"])
    if cabin == reservation["cabin"]:
        return ctx.decide("declined", "the reservation is already in that cabin", reads)
    if flown_segments(ctx.db, reservation):
        return ctx.decide("refused", "the cabin cannot change once a flight was flown", reads)
    segments = reservation["flights"]
    blocker = _reprice_blocker(ctx, reservation, cabin, segments, reads)
    if blocker is not None:
        return blocker
    reads.append(user_read(reservation["user_id"]))
    reads += _price_searches(segments)
    flights = [{"flight_number": s["flight_number"], "date": s["date"]} for s in segments]
    return _update(ctx, reservation, cabin, flights, reads)


def add_bags(ctx: Context) -> Decision:
    """Policy "Change baggage": bags are added, never removed; the tier x cabin allowance is
    free, each extra bag costs 50. Our reading for bags already on the reservation (after a
    cabin downgrade lowered the allowance, say): they keep their status and are not charged
    again; see :func:`~airline_gym.domain.fares.nonfree_after_adding`."""
    reservation, refusal = ctx.reservation()
    if reservation is None:
        return refusal  # type: ignore[return-value]
    wanted = ctx.request.total_bags
    if wanted is None:
        raise SolverError(f"request {ctx.index}: add_bags needs total_bags")
    rid = reservation["reservation_id"]
    reads: list[Any] = ctx.reservation_reads(rid)
    if wanted < reservation["total_baggages"]:
        return ctx.decide("refused", "checked bags can be added but not removed", reads)
    if wanted == reservation["total_baggages"]:
        return ctx.decide("declined", "the reservation already has that many bags", reads)
    owner = ctx.user(reservation["user_id"])
    reads.append(user_read(owner["user_id"]))
    allowance = free_bags(owner["membership"], reservation["cabin"], len(reservation["passengers"]))
    nonfree = nonfree_after_adding(
        int(reservation["total_baggages"]), int(reservation["nonfree_baggages"]), allowance, wanted
    )
    fee = BAG_FEE * (nonfree - int(reservation["nonfree_baggages"]))
    payment_id, refused = _payment(ctx, reservation, fee, "the bags cost", reads)
    if refused is not None:
        return replace(refused, details={"total_bags": wanted})
    write = call(
        "update_reservation_baggages",
        reservation_id=rid,
        total_baggages=wanted,
        nonfree_baggages=nonfree,
        payment_id=payment_id,
    )
    details = {
        "allowance": allowance,
        "nonfree": nonfree,
        "payments": {payment_id: fee} if fee else {},
    }
    return ctx.decide(
        "granted",
        "extra bags beyond the allowance cost 50 each",
        reads,
        [write],
        amount=fee,
        details=details,
    )


def edit_passenger(ctx: Context) -> Decision:
    """Policy "Change passengers": names and dates of birth may change."""
    reservation, refusal = ctx.reservation()
    if reservation is None:
        return refusal  # type: ignore[return-value]
    index, new = ctx.request.passenger_index, ctx.request.new_passenger
    if index is None or new is None:
        raise SolverError(
            f"request {ctx.index}: edit_passenger needs passenger_index and new_passenger"
        )
    rid = reservation["reservation_id"]
    reads = ctx.reservation_reads(rid)
    passengers = [dict(p) for p in reservation["passengers"]]
    if not 0 <= index < len(passengers):
        return ctx.decide("refused", "no such passenger on the reservation", reads)
    replacement = {"first_name": new.first_name, "last_name": new.last_name, "dob": new.dob}
    if passengers[index] == replacement:
        return ctx.decide("declined", "the passenger is already as asked", reads)
    passengers[index] = replacement
    write = call("update_reservation_passengers", reservation_id=rid, passengers=passengers)
    return ctx.decide("granted", "passenger details may be modified", reads, [write])


def change_count(ctx: Context) -> Decision:
    """Policy: the number of passengers cannot change, not even by a human agent (no transfer)."""
    return ctx.decide("refused", "the number of passengers cannot be modified")


def add_insurance(ctx: Context) -> Decision:
    """Policy: insurance cannot be added after the initial booking."""
    return ctx.decide("refused", "insurance cannot be added after booking")
