"""Whether a message names a write: the details a customer must have been told before it says yes.

A proposal is read for its content, never for a phrase. :func:`unnamed` lists the details of one
write that a message leaves out; strict grading asks it of the message a customer said yes to
before each write (:mod:`~airline_gym.domain.strict_grading`), and the offline customer asks the
same details of a proposal before it says yes (``airline_gym.users.intent_wishes``).

The details, by tool (``before``: the DB as the write found it):

============================== ===========================================================
tool                           the proposal names
============================== ===========================================================
``cancel_reservation``         the reservation id, and that it is cancelled
``update_reservation_flights`` the reservation id; each new flight number; the cabin when it
                               changes; the payment method when money moves
``update_reservation_baggages`` the reservation id; the bags (the new total or the number
                               added); the payment method when a bag is paid for
``update_reservation_passengers`` the reservation id; each changed name or date of birth
``send_certificate``           a certificate and its amount
``book_reservation``           every flight number; the cabin; every payment method
============================== ===========================================================

>>> unnamed("Shall I proceed?", "cancel_reservation", {"reservation_id": "ABC123"}, None)
['reservation ABC123', 'the cancellation']
>>> unnamed("May I cancel ABC123 for you?", "cancel_reservation", {"reservation_id": "ABC123"},
...         None)
[]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from airline_gym.domain.database import AirlineDB
from airline_gym.domain.fares import change_cost
from airline_gym.domain.said import bag_counts, cabins, figure_equals, figures, mentions_certificate

__all__ = ["CANCEL_RE", "unnamed"]

CANCEL_RE = re.compile(r"\bcancel", re.IGNORECASE)


def _reservation(before: AirlineDB | None, rid: str) -> Mapping[str, Any] | None:
    return before.reservation(rid) if before is not None and rid else None


def _flights(text: str, args: Mapping[str, Any], rid: str, before: AirlineDB | None) -> list[str]:
    record = _reservation(before, rid)
    old = {(s["flight_number"], s["date"]) for s in record["flights"]} if record else set()
    wanted = [f for f in args.get("flights") or [] if isinstance(f, Mapping)]
    missing = [
        f"flight {f.get('flight_number')}"
        for f in wanted
        if (f.get("flight_number"), f.get("date")) not in old
        and str(f.get("flight_number")) not in text
    ]
    cabin = str(args.get("cabin"))
    if (record is None or cabin != record["cabin"]) and cabin not in cabins(text):
        missing.append(f"the cabin ({cabin.replace('_', ' ')})")
    cost = change_cost(before, record, cabin, wanted) if before is not None and record else None
    if cost != 0 and str(args.get("payment_id")) not in text:
        missing.append(f"the payment method ({args.get('payment_id')})")
    return missing


def _bags(text: str, args: Mapping[str, Any], rid: str, before: AirlineDB | None) -> list[str]:
    record = _reservation(before, rid)
    total = args.get("total_baggages")
    said = bag_counts(text)
    missing = []
    added = total - record["total_baggages"] if record and isinstance(total, int) else None
    if total not in said and added not in said:
        missing.append(f"the bags ({total} in all)")
    paid = record is None or args.get("nonfree_baggages") != record["nonfree_baggages"]
    if paid and str(args.get("payment_id")) not in text:
        missing.append(f"the payment method ({args.get('payment_id')})")
    return missing


def _passengers(
    text: str, args: Mapping[str, Any], rid: str, before: AirlineDB | None
) -> list[str]:
    record = _reservation(before, rid)
    old = record["passengers"] if record else []
    lower = text.lower()
    missing = []
    for i, new in enumerate(args.get("passengers") or []):
        if not isinstance(new, Mapping):
            continue
        was = old[i] if i < len(old) else {}
        for key in ("first_name", "last_name", "dob"):
            value = str(new.get(key, ""))
            if value != str(was.get(key, "")) and value.lower() not in lower:
                missing.append(f"{key.replace('_', ' ')} {value}")
    return missing


def _booking(text: str, args: Mapping[str, Any]) -> list[str]:
    missing = [
        f"flight {f.get('flight_number')}"
        for f in args.get("flights") or []
        if isinstance(f, Mapping) and str(f.get("flight_number")) not in text
    ]
    cabin = str(args.get("cabin"))
    if cabin not in cabins(text):
        missing.append(f"the cabin ({cabin.replace('_', ' ')})")
    missing += [
        f"the payment method ({p.get('payment_id')})"
        for p in args.get("payment_methods") or []
        if isinstance(p, Mapping) and str(p.get("payment_id")) not in text
    ]
    return missing


def unnamed(text: str, name: str, args: Mapping[str, Any], before: AirlineDB | None) -> list[str]:
    """The details of the write ``name(args)`` that ``text`` does not name (empty: it names the
    write). ``before`` is the DB the write applies to (None: judged without it, as if every
    field changed)."""
    rid = str(args.get("reservation_id") or "")
    missing = [f"reservation {rid}"] if rid and rid not in text else []
    if name == "cancel_reservation":
        return missing + ([] if CANCEL_RE.search(text) else ["the cancellation"])
    if name == "update_reservation_flights":
        return missing + _flights(text, args, rid, before)
    if name == "update_reservation_baggages":
        return missing + _bags(text, args, rid, before)
    if name == "update_reservation_passengers":
        return missing + _passengers(text, args, rid, before)
    if name == "send_certificate":
        amount = args.get("amount")
        said = isinstance(amount, int | float) and any(
            figure_equals(v, str(amount)) for v in figures(text)
        )
        return [] if said and mentions_certificate(text) else [f"a certificate of {amount}"]
    if name == "book_reservation":
        return _booking(text, args)
    return missing
