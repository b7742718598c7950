"""Rules for bookings, cancellations, compensation and information-only questions.

Each rule cites the policy clause ("Book flight", "Cancel flight", "Refunds and Compensation")
it implements, in our words.
"""

from __future__ import annotations

from typing import Any

from airline_gym.domain.decisions import Decision
from airline_gym.domain.flight_options import itinerary_connects
from airline_gym.domain.records import Record
from airline_gym.taskgen.context import Context, SolverError
from airline_gym.taskgen.facts import (
    BAG_FEE,
    COVERED_REASONS,
    INSURANCE_FEE,
    MAX_PASSENGERS,
    WITHIN_24H,
    call,
    cancelled_segments,
    flown_segments,
    free_bags,
    is_upcoming,
    number,
    paid,
    plan_payment,
    reservation_read,
    searches,
    status_of,
    user_read,
)


def cancel(ctx: Context) -> Decision:
    """Policy "Cancel flight": a flown segment means a transfer; else allowed if booked within
    24 hours, the airline cancelled a flight, the cabin is business, or insurance covers the
    reason (health or weather); refunds go to the original payment methods."""
    reservation, refusal = ctx.reservation()
    if reservation is None:
        return refusal  # type: ignore[return-value]
    rid = reservation["reservation_id"]
    reads: list[Any] = ctx.reservation_reads(rid)
    if flown_segments(ctx.db, reservation):
        summary = (
            f"The customer wants to cancel reservation {rid}, part of which has already been flown."
        )
        write = call("transfer_to_human_agents", summary=summary)
        return ctx.decide("transfer", "a partly flown trip needs a human agent", reads, [write])
    write = call("cancel_reservation", reservation_id=rid)
    if reservation["created_at"] >= WITHIN_24H:
        return ctx.decide("granted", "booked within the last 24 hours", reads, [write])
    cancelled = cancelled_segments(ctx.db, reservation)
    if reservation["cabin"] == "business":
        return ctx.decide("granted", "business reservations can be cancelled", reads, [write])
    if reservation["insurance"] == "yes" and ctx.request.reason in COVERED_REASONS:
        return ctx.decide("granted", "insurance covers a health or weather reason", reads, [write])
    if cancelled:
        s = cancelled[0]
        reads.append(call("get_flight_status", flight_number=s["flight_number"], date=s["date"]))
        return ctx.decide("granted", "the airline cancelled a flight", reads, [write])
    if ctx.request.reason == "airline_cancelled":  # the claim is checked, flight by flight
        reads += [
            call("get_flight_status", flight_number=s["flight_number"], date=s["date"])
            for s in reservation["flights"]
        ]
    return ctx.decide(
        "refused", "no cancellation rule applies (24 h, airline, business, insurance)", reads
    )


def book(ctx: Context) -> Decision:
    """Policy "Book flight": one cabin, at most five passengers on the same available flights;
    bags beyond the tier x cabin allowance cost 50; insurance 30 per passenger; payment from the
    profile, at most one certificate, one credit card and three gift cards."""
    request = ctx.request
    trip = request.trip
    if trip is None or request.cabin is None:
        raise SolverError(f"request {ctx.index}: book needs a trip and a cabin")
    user = ctx.user()
    reads: list[Any] = [user_read(user["user_id"])]
    n = len(request.passengers)
    if n == 0:
        raise SolverError(f"request {ctx.index}: book needs passengers")
    if n > MAX_PASSENGERS:
        return ctx.decide("refused", "a reservation has at most five passengers", reads)
    cabin = request.cabin
    legs = [(trip.origin, trip.destination, trip.outbound)]
    if trip.return_rule is not None:
        legs.append((trip.destination, trip.origin, trip.return_rule))
    flights: list[dict[str, str]] = []
    price = 0
    for index, (origin, destination, rule) in enumerate(legs):
        reads += searches(origin, destination, rule)
        option = ctx.choose(origin, destination, rule, cabin, n)
        if option is None or (rule.max_price is not None and option.price(cabin) > rule.max_price):
            ctx.note_ties(legs[index + 1 :], cabin, n)
        if option is None:
            return ctx.decide("declined", "no available flight fits the customer's rule", reads)
        if rule.max_price is not None and option.price(cabin) > rule.max_price:
            over = {"flights": flights + option.flights, "cabin": cabin}
            clause = "the flight costs more than the customer's cap"
            return ctx.decide("declined", clause, reads, details=over)
        flights += option.flights
        price += option.price(cabin)
    if not itinerary_connects(ctx.db, flights):
        ctx.ill_posed.append("the return leaves before the outbound arrives")
        return ctx.decide("declined", "the return would leave before the outbound", reads)
    bags = request.total_bags or 0
    nonfree = max(0, bags - free_bags(user["membership"], cabin, n))
    total = price * n + (INSURANCE_FEE * n if request.insurance else 0) + BAG_FEE * nonfree
    if request.max_total is not None and total > request.max_total:
        offered: dict[str, Any] = {"flights": flights, "cabin": cabin, "total": total}
        clause = f"the booking costs {total}, over the customer's cap"
        return ctx.decide("declined", clause, reads, amount=total, details=offered)
    plan = plan_payment(user, [(p.payment_id, p.amount) for p in request.payment], total)
    if isinstance(plan, str):
        outcome = "refused" if "profile" in plan or "at most" in plan else "declined"
        return ctx.decide(outcome, plan, reads, amount=total)  # type: ignore[arg-type]
    write = call(
        "book_reservation",
        user_id=user["user_id"],
        origin=trip.origin,
        destination=trip.destination,
        flight_type=trip.trip_type,
        cabin=cabin,
        flights=flights,
        passengers=[
            {"first_name": p.first_name, "last_name": p.last_name, "dob": p.dob}
            for p in request.passengers
        ],
        payment_methods=plan,
        total_baggages=bags,
        nonfree_baggages=nonfree,
        insurance="yes" if request.insurance else "no",
    )
    details = {
        "flights": [f["flight_number"] for f in flights],
        "price_per_passenger": price,
        "total": total,
        "payments": {p["payment_id"]: p["amount"] for p in plan},
    }
    return ctx.decide(
        "granted",
        "booked as the customer chose, paid from the profile",
        reads,
        [write],
        amount=total,
        details=details,
    )


def _changed_or_cancelled(ctx: Context, reservation_id: str | None) -> bool:
    """Whether an earlier request of this intent changed or cancelled the reservation (any
    reservation when None)."""
    for decision in ctx.earlier:
        for write in decision.writes:
            if write.name in ("cancel_reservation", "update_reservation_flights") and (
                reservation_id in (None, write.arguments.get("reservation_id"))
            ):
                return True
    return False


def _complained_reservation(ctx: Context, user: Record, reads: list[Any]) -> Record | None:
    """The reservation a compensation request is about (looked for when not named)."""
    request = ctx.request
    if request.reservation_id is not None:
        return ctx.db.reservation(request.reservation_id)
    wanted = "cancelled" if request.complaint == "cancelled" else "delayed"
    for rid in user["reservations"]:
        reads.append(reservation_read(rid))
    for rid in user["reservations"]:
        record = ctx.db.reservation(rid)
        for s in record["flights"] if record else ():
            if request.flight_number not in (None, s["flight_number"]):
                continue
            if status_of(ctx.db, s["flight_number"], s["date"]) == wanted:
                return record
    return None


def compensation(ctx: Context) -> Decision:
    """Policy "Refunds and Compensation": only silver/gold members, insured or business
    reservations; a cancelled flight earns 100 x passengers, a delayed one 50 x passengers once
    the reservation is changed or cancelled; nothing for any other reason."""
    request = ctx.request
    if request.complaint == "delayed" and not _changed_or_cancelled(ctx, request.reservation_id):
        # Categorical: nothing to look up when the customer keeps the reservation as it is.
        return ctx.decide(
            "refused", "a delay earns nothing unless the trip is changed or cancelled"
        )
    user = ctx.user()
    reads: list[Any] = [user_read(user["user_id"])]
    reservation = _complained_reservation(ctx, user, reads)
    if reservation is None or reservation["user_id"] != user["user_id"]:
        return ctx.decide("refused", "no flight of the customer's matches the complaint", reads)
    rid = reservation["reservation_id"]
    reads.append(reservation_read(rid))
    eligible = (
        user["membership"] in ("silver", "gold")
        or reservation["insurance"] == "yes"
        or reservation["cabin"] == "business"
    )
    if not eligible:
        return ctx.decide(
            "refused", "regular members without insurance in (basic) economy get nothing", reads
        )
    flight = next(
        (
            s
            for s in reservation["flights"]
            if request.flight_number in (None, s["flight_number"])
            and request.flight_date in (None, s["date"])
        ),
        None,
    )
    if flight is None:
        return ctx.decide("refused", "the flight is not in the reservation", reads)
    status = status_of(ctx.db, flight["flight_number"], flight["date"])
    reads.append(
        call("get_flight_status", flight_number=flight["flight_number"], date=flight["date"])
    )
    passengers = len(reservation["passengers"])
    if request.complaint == "cancelled" and status == "cancelled":
        amount, clause = 100 * passengers, "a cancelled flight: a certificate of 100 per passenger"
    elif request.complaint == "delayed" and status == "delayed" and _changed_or_cancelled(ctx, rid):
        amount, clause = 50 * passengers, "a delayed flight, changed or cancelled: 50 per passenger"
    else:
        return ctx.decide("refused", "the facts do not match the complaint", reads)
    write = call("send_certificate", user_id=user["user_id"], amount=amount)
    return ctx.decide(
        "granted", clause, reads, [write], amount=amount, details={"passengers": passengers}
    )


def info(ctx: Context) -> Decision:
    """Information-only questions: the agent looks the number up and says it."""
    request = ctx.request
    question = request.question
    user = ctx.user()
    reads: list[Any] = [user_read(user["user_id"])]
    methods = user["payment_methods"].values()
    value: float
    if question in ("gift_card_balance", "certificate_balance"):
        source = "gift_card" if question == "gift_card_balance" else "certificate"
        value = sum(m["amount"] for m in methods if m["source"] == source)
    elif question == "total_upcoming_cost":
        # a reservation this customer's own booking made needs no look-up: the agent made it
        known = ctx.db.base.reservations
        reads += [reservation_read(rid) for rid in user["reservations"] if rid in known]
        records = [ctx.db.reservation(rid) for rid in user["reservations"]]
        value = sum(paid(r) for r in records if r is not None and is_upcoming(ctx.db, r))
    elif question in ("reservation_cost", "bag_allowance"):
        reservation, refusal = ctx.reservation()
        if reservation is None:
            return refusal  # type: ignore[return-value]
        reads = ctx.reservation_reads(reservation["reservation_id"])
        if question == "reservation_cost":
            value = paid(reservation)
        else:
            reads.append(user_read(user["user_id"]))
            value = free_bags(
                user["membership"], reservation["cabin"], len(reservation["passengers"])
            )
    elif question == "change_total":
        reads = []
        only = request.payment[0].payment_id if request.payment else None
        value = abs(
            sum(
                amount
                for d in ctx.earlier
                if d.outcome == "granted" and d.details
                for pid, amount in d.details.get("payments", {}).items()
                if only in (None, pid)
            )
        )
    else:
        raise SolverError(f"request {ctx.index}: info needs a question")
    said = number(value)
    return ctx.decide(
        "granted", "the agent says the number it found", reads, say=[said], details={"value": said}
    )
