"""The customer-simulator audit rules on crafted transcripts: each rule firing and not firing."""

from __future__ import annotations

from typing import Any

from cpu_clock import cpu_clock

from airline_gym.domain.user_audit import (
    AUDIT_KINDS,
    audit_conversation,
    count_kinds,
    empty_or_repeated,
    invention,
    leak,
    premature_stop,
    role_break,
    unwarranted_transfer,
)
from airline_gym.domain.user_values import stated_values, unknown_kinds

GREETING = "Hi! How can I help you today?"


def agent(text: str | None, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"c{i}", "name": name, "arguments": args, "requestor": "assistant"}
        for i, (name, args) in enumerate(calls)
    ]
    return {"role": "assistant", "content": text, "tool_calls": tool_calls or None}


def user(text: str | None) -> dict[str, Any]:
    return {"role": "user", "content": text, "tool_calls": None}


def tool(content: str) -> dict[str, Any]:
    return {"id": "c0", "role": "tool", "content": content, "requestor": "assistant"}


def scenario(known: str = "", unknown: str | None = None, task: str = "") -> dict[str, Any]:
    return {
        "persona": None,
        "instructions": {
            "domain": "airline",
            "reason_for_call": "You want to cancel a trip.",
            "known_info": known or "You are Emma Kim.\nYour user id is emma_kim_9957.",
            "unknown_info": unknown,
            "task_instructions": task or "You want a refund.",
        },
    }


EMMA = scenario()


def indexes(flags: list[dict[str, Any]]) -> list[int]:
    return [f["message_index"] for f in flags]


# --- premature_stop ----------------------------------------------------------------------------
CONFIRM = "I will cancel EHGLP3 and refund $250. Do you confirm you'd like me to proceed?"


def test_premature_stop_fires_when_the_customer_accepts_then_hangs_up_before_the_write():
    messages = [agent(GREETING), user("Cancel EHGLP3."), agent(CONFIRM), user("Yes. ###STOP###")]
    flags = premature_stop(EMMA, messages)
    assert flags == [{"kind": "premature_stop", "message_index": 3, "evidence": "Yes. ###STOP###"}]
    # a bare ending after a confirmation request leaves the agent hanging too
    bare = [*messages[:3], user("###STOP###")]
    assert indexes(premature_stop(EMMA, bare)) == [3]
    # the customer asks for a write itself and ends, after an offer with no question mark
    offer = agent("I can issue a $200 certificate now, or transfer you. What would you prefer?")
    asked = [agent(GREETING), user("Delayed!"), offer, user("Please issue it. ###STOP###")]
    assert indexes(premature_stop(EMMA, asked)) == [3]
    # "Would you like me to do that?" points at the clause before it
    pointer = agent("I can add one free checked bag. Would you like me to do that?")
    assert indexes(premature_stop(EMMA, [pointer, user("Sure ###STOP###")])) == [1]
    # a "no" that is not a refusal of the action
    resigned = user("There's no way to change the date? Please go ahead and cancel. ###STOP###")
    assert indexes(premature_stop(EMMA, [*asked[:3], resigned])) == [3]


def test_premature_stop_does_not_fire_on_a_decline_a_transfer_a_done_write_or_no_question():
    base = [agent(GREETING), user("Cancel EHGLP3."), agent(CONFIRM)]
    assert premature_stop(EMMA, [*base, user("No, don't cancel it. ###STOP###")]) == []
    refused = "I need a $0 charge to proceed, so I won't move forward. Leave it as is. ###STOP###"
    assert premature_stop(EMMA, [*base, user(refused)]) == []
    # "update" as a noun is no write; confirming what was done is no acceptance of a new write
    notice = agent("Your trip was rebooked. Please confirm you received this update.")
    assert premature_stop(EMMA, [notice, user("I confirm the details. ###STOP###")]) == []
    # the write happened before the customer ended the call
    done = [
        *base,
        user("Yes please."),
        agent(None, ("cancel_reservation", {"reservation_id": "EHGLP3"})),
        tool("{}"),
        agent("Done, it is cancelled. Anything else?"),
        user("No, thanks. ###STOP###"),
    ]
    assert premature_stop(EMMA, done) == []
    # accepting a transfer is not a write
    transfer = agent("I cannot cancel it. Would you like me to transfer you to a human agent?")
    accepted = [*base[:2], transfer, user("Yes, please transfer me. ###TRANSFER###")]
    assert premature_stop(EMMA, accepted) == []
    # a question that asks for no write
    email = agent("Your booking is confirmed. Would you like me to email the itinerary?")
    assert premature_stop(EMMA, [email, user("Yes, please email it. ###STOP###")]) == []
    # a turn that does not end the call
    assert premature_stop(EMMA, [*base, user("Yes.")]) == []


# --- leak --------------------------------------------------------------------------------------
FORGETFUL = scenario(unknown="You don't remember your reservation id.")


def test_leak_fires_on_a_value_of_a_withheld_kind_said_before_the_agent():
    messages = [agent(GREETING), user("I want to cancel reservation XEWRD9.")]
    flags = leak(FORGETFUL, messages)
    assert indexes(flags) == [1]
    assert flags[0]["evidence"].startswith("reservation id XEWRD9: I want to cancel")
    # a value written in unknown_info itself
    told = scenario(unknown="You do not know that the fee is $75.")
    assert indexes(leak(told, [agent(GREETING), user("Is the fee $75?")])) == [1]
    assert unknown_kinds(FORGETFUL) == {"reservation id"}


def test_leak_does_not_fire_once_the_agent_said_it_or_for_kinds_not_withheld():
    said = [
        agent(GREETING),
        user("I don't remember my reservation id."),
        agent("I found reservation XEWRD9 on your profile. Is that the one?"),
        user("Yes, XEWRD9 is the one."),
    ]
    assert leak(FORGETFUL, said) == []
    # user ids are not withheld in this scenario; nothing is withheld in EMMA
    assert leak(FORGETFUL, [agent(GREETING), user("My user id is emma_kim_9957.")]) == []
    assert leak(EMMA, [agent(GREETING), user("Reservation XEWRD9 please.")]) == []


# --- invention ---------------------------------------------------------------------------------
def test_invention_fires_on_ids_neither_in_the_scenario_nor_said_by_the_agent():
    messages = [
        agent(GREETING),
        user("I'm emma_kim_9957; reservation 4WQ150, pay with gift_card_1234567."),
    ]
    flags = invention(EMMA, messages)
    assert indexes(flags) == [1]
    evidence = flags[0]["evidence"]
    assert "payment id gift_card_1234567" in evidence and "reservation id 4WQ150" in evidence
    assert "emma_kim_9957" not in evidence.split(":")[0]  # given by the scenario
    # a shouted word is not a reservation id; after "reservation id" six capitals are
    assert invention(EMMA, [user("Please CANCEL it EXCEPT the hotel.")]) == []
    assert indexes(invention(EMMA, [user("My reservation id is ABCDEF.")])) == [0]


def test_invention_does_not_fire_on_ids_the_agent_said_or_the_scenario_gave():
    messages = [
        agent(GREETING),
        user("My user id is emma_kim_9957."),
        agent(None, ("get_user_details", {"user_id": "emma_kim_9957"})),
        tool('{"payment_methods": {"credit_card_7815826": {}}, "reservations": ["NQNU5R"]}'),
        agent("You have reservation NQNU5R and card credit_card_7815826."),
        user("Cancel NQNU5R and refund to credit_card_7815826."),
    ]
    assert invention(EMMA, messages) == []
    # only what the customer saw counts: an id only in a tool result is still invented
    hidden = [*messages[:4], user("Cancel NQNU5R.")]
    assert indexes(invention(EMMA, hidden)) == [4]
    # the scenario names the reservation (all capitals, no digit)
    named = scenario(task="You want to cancel IFOYYZ and NQNU5R.")
    assert invention(named, [agent(GREETING), user("Reservation id: IFOYYZ")]) == []


# --- role_break --------------------------------------------------------------------------------
def test_role_break_fires_on_tool_syntax_the_agents_greeting_and_agent_lines():
    turns = [
        user('{"name": "cancel_reservation", "arguments": {"reservation_id": "EHGLP3"}}'),
        user("Hello! How can I help you today?"),
        user("Your reservation has been cancelled. Is there anything else I can help you with?"),
        user("Agent: I have cancelled your reservation."),
        user("get_reservation_details(reservation_id='EHGLP3')"),
    ]
    messages = [agent(GREETING)]
    for turn in turns:
        messages += [turn, agent("Okay.")]
    assert indexes(role_break(EMMA, messages)) == [1, 3, 5, 7, 9]
    calling = {"role": "user", "content": "", "tool_calls": [{"name": "calculate"}]}
    assert role_break(EMMA, [calling])[0]["evidence"].startswith("tool call calculate")


def test_role_break_does_not_fire_on_ordinary_customer_turns():
    turns = [
        "Can you help me cancel my reservation?",
        "I have booked two flights by mistake; I want one cancelled.",
        "Thank you for your help!",
        "Could you check the reservation details for EHGLP3?",
    ]
    messages = [agent(GREETING)]
    for turn in turns:
        messages += [user(turn), agent("Okay.")]
    assert role_break(EMMA, messages) == []


# --- empty_or_repeated -------------------------------------------------------------------------
def test_empty_or_repeated_fires_on_an_empty_turn_and_on_the_third_same_text():
    messages = [agent(GREETING), user("  "), agent("Sorry?"), user(None)]
    assert indexes(empty_or_repeated(EMMA, messages)) == [1, 3]
    same = [agent(GREETING)]
    for _ in range(4):
        same += [user("I want a refund."), agent("I cannot.")]
    flags = empty_or_repeated(EMMA, same)
    assert indexes(flags) == [5, 7]
    assert flags[0]["evidence"] == "(third time) I want a refund."


#: What SmolLM2-135M said twice, word for word, as the LLM customer (issue 34).
SMOLLM2 = (
    "I'm here to help with any project or question you have. Whether it's writing, research, "
    "or brainstorming, feel free to share. What's on your mind?"
)


def test_a_customer_that_says_a_long_turn_again_or_talks_as_an_assistant_is_flagged():
    messages = [agent(GREETING), user(SMOLLM2), agent("Could you give me your user id?")]
    messages += [user(SMOLLM2), agent("I need your user id to help.")]
    repeated = empty_or_repeated(EMMA, messages)
    assert indexes(repeated) == [3]
    assert repeated[0]["evidence"].startswith("(said again) I'm here to help")
    # the same push-back on another refusal, a turn apart, is no repeat
    push = "I really need this. Could you make an exception just this once?"
    apart = [agent(GREETING), user(push), agent("No."), user("Another request."), agent("No.")]
    assert empty_or_repeated(EMMA, [*apart, user(push)]) == []
    assert indexes(role_break(EMMA, messages)) == [1, 3]
    assert {f["kind"] for f in audit_conversation(EMMA, messages)} == {
        "role_break",
        "empty_or_repeated",
    }


def test_empty_or_repeated_does_not_fire_on_twice_or_on_alternating_text():
    messages = [agent(GREETING)]
    for text in ("I want a refund.", "I want a refund.", "Please.", "I want a refund."):
        messages += [user(text), agent("I cannot.")]
    assert empty_or_repeated(EMMA, messages) == []


# --- unwarranted_transfer ----------------------------------------------------------------------
def test_unwarranted_transfer_fires_without_a_transfer_or_a_reason():
    messages = [agent(GREETING), user("Cancel EHGLP3."), agent("Looking."), user("###TRANSFER###")]
    assert indexes(unwarranted_transfer(EMMA, messages)) == [3]
    scope = [agent(GREETING), user("###OUT-OF-SCOPE###")]
    assert indexes(unwarranted_transfer(EMMA, scope)) == [1]
    # being told not to ask for a transfer is no reason to transfer
    forbidden = scenario(task="Do not ask to be transferred.")
    assert indexes(unwarranted_transfer(forbidden, messages)) == [3]
    refused = [agent("I am unable to transfer you to a human agent."), user("###TRANSFER###")]
    assert indexes(unwarranted_transfer(EMMA, refused)) == [1]


def test_unwarranted_transfer_does_not_fire_after_a_transfer_or_with_a_reason():
    called = [
        agent(None, ("transfer_to_human_agents", {"summary": "refund"})),
        tool("Transfer successful"),
        agent("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."),
        user("###TRANSFER###"),
    ]
    assert unwarranted_transfer(EMMA, called) == []
    offered = [agent("I can transfer you to a human agent."), user("Yes. ###TRANSFER###")]
    assert unwarranted_transfer(EMMA, offered) == []
    wants = scenario(task="If the agent refuses, ask to speak to a supervisor.")
    assert unwarranted_transfer(wants, [agent(GREETING), user("###TRANSFER###")]) == []


# --- the whole audit ---------------------------------------------------------------------------
def test_audit_conversation_orders_flags_and_counts_every_kind():
    messages = [
        agent(GREETING),
        user("How can I help you? My reservation id is ZZZ999."),
        agent(CONFIRM),
        user("yes ###STOP###"),
    ]
    flags = audit_conversation(EMMA, messages)
    assert [(f["message_index"], f["kind"]) for f in flags] == [
        (1, "invention"),
        (1, "role_break"),
        (3, "premature_stop"),
    ]
    assert set(flags[0]) == {"kind", "message_index", "evidence"}
    counts = count_kinds(flags)
    assert list(counts) == list(AUDIT_KINDS)
    assert counts == {**dict.fromkeys(AUDIT_KINDS, 0), "invention": 1, "role_break": 1,
                      "premature_stop": 1}  # fmt: skip
    # no scenario at all (or a free-text one): every rule still runs
    assert [f["kind"] for f in audit_conversation(None, messages)].count("invention") == 1
    free = {"instructions": "You are emma_kim_9957 and want ZZZ999 cancelled."}
    assert "invention" not in [f["kind"] for f in audit_conversation(free, messages)]


def test_evidence_is_the_turn_on_one_line_and_capped():
    long = "word " * 200 + "How can I help you?"
    flags = role_break(EMMA, [user(long)])
    assert len(flags[0]["evidence"]) == 400 and flags[0]["evidence"].endswith("…")
    assert "\n" not in role_break(EMMA, [user("Hi\nHow can I help you?")])[0]["evidence"]


def test_stated_values_reads_the_database_shapes():
    text = "emma_kim_9957 HAT030 EHGLP3 credit_card_7815826 $1,286.50 on 1990-04-05, economy"
    assert set(stated_values(text)) == {
        ("user id", "emma_kim_9957"),
        ("flight number", "HAT030"),
        ("reservation id", "EHGLP3"),
        ("payment id", "credit_card_7815826"),
        ("amount", "1286.5"),
        ("date of birth", "1990-04-05"),
        ("cabin", "economy"),
    }


def test_a_huge_turn_is_read_by_its_head_and_tail_and_stays_fast():
    huge = "How " * 250_000  # 1 MB of almost-matches
    messages = [agent(CONFIRM), user(huge + " yes ###STOP###"), user(None), user("x" * 10**6)]
    with cpu_clock() as spent:
        flags = audit_conversation(EMMA, messages)
    assert spent() < 1.0  # ~0.015 s of CPU; reading all of it: 2.4 s (~25 s with older rules)
    # the ending and the acceptance at the tail are still seen; the empty turn still is
    assert [(f["kind"], f["message_index"]) for f in flags] == [
        ("premature_stop", 1),
        ("empty_or_repeated", 2),
    ]


def test_odd_message_shapes_are_read_not_raised_on():
    messages: list[dict[str, Any]] = [
        {},
        {"role": "user", "content": ["not", "text"]},
        {"role": "user"},
        {"role": "user", "content": "###STOP###", "tool_calls": [{"function": "oops"}]},
        {"role": "assistant", "content": 42},
        {"role": "user", "content": "###TRANSFER###"},
    ]
    flags = audit_conversation({"instructions": None}, messages)
    assert [(f["kind"], f["message_index"]) for f in flags] == [
        ("empty_or_repeated", 1),
        ("empty_or_repeated", 2),
        ("role_break", 3),
        ("unwarranted_transfer", 5),
    ]
