"""A policy-following agent that sees only what the env gives an agent.

:class:`PolicyAgent` reads the customer's requests from the customer's words
(:mod:`.reading`), identifies the customer, looks up what the policy needs with the airline's
tools (:mod:`.lookups`), applies the policy to what the results show, proposes each write with
its details and waits for a yes, writes, refuses what the policy refuses, transfers only when
the policy says, and answers a question with one figure. It is built without a task set and
reads nothing but its observations (tool results and customer turns) and ``info["tools"]``: it
is the correct agent an audit compares the exploits (:mod:`.exploits`) with.

The conversation is one generator (:meth:`PolicyAgent.conversation`) that yields actions; each
step of it is a method a variant overrides (``act_on``, ``grant``, ``propose``, ``refuse``, ...).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import Any

from airline_gym.agents.base import DONE, Action, offers_tool, text_message, tool_call_message
from airline_gym.agents.policy.lookups import decide, locate, missing_reads, resolve, wanted
from airline_gym.agents.policy.reading import (
    AGENDA_RE,
    USER_ID_RE,
    read_details,
    read_name,
    read_requests,
    read_trip,
    said_yes,
)
from airline_gym.agents.policy.speech import (
    HANDOFF,
    Wording,
    details_question,
    done_text,
    figure_text,
    proposal,
)
from airline_gym.agents.policy.world import SeenWorld
from airline_gym.domain.decisions import Call, Decision
from airline_gym.domain.intents import Request
from airline_gym.domain.tool_reply import RESPOND_TOOL
from airline_gym.env.actions import DONE_TOOL
from airline_gym.env.protocols import PROTOCOLS, get_protocol

__all__ = ["CLOSING", "PolicyAgent", "Script"]

Script = Generator[Action, None, Any]
CLOSING = "Is there anything else I can help you with?"
TRANSFER_TOOL = "transfer_to_human_agents"
_MAX_ROUNDS = 6  # lookup rounds for one decision


def _offers(info: dict[str, Any], tool: str, default: bool) -> bool:
    """Whether the env offers ``tool`` (``done``: the ``gym`` and ``tool-reply`` protocols;
    ``respond_to_user``: ``tool-reply``), read from ``info["protocol"]``, which costs nothing,
    before the tool list, whose schemas are copied when read."""
    protocol = info.get("protocol") if isinstance(info, dict) else None
    if isinstance(protocol, str) and protocol in PROTOCOLS:
        named = get_protocol(protocol)
        return named.offers_done if tool == DONE_TOOL else named.reply_tool
    return offers_tool(info, tool, default)


class PolicyAgent:
    """Follows the airline policy from what it observes; ``wording`` picks its phrases."""

    def __init__(self, wording: Wording | None = None) -> None:
        self.wording = wording or Wording()
        self.reset({})

    # -- the agent protocol ------------------------------------------------------------------------

    def reset(self, info: dict[str, Any]) -> None:
        """A new episode: forget everything."""
        self.world = SeenWorld()
        self.user_id: str | None = None
        self.name = ""
        #: The requests settled so far (with their details) and the decisions that settled them
        #: (the writes actually made; ``declined`` when the customer said no).
        self.requests: list[Request] = []
        self.decisions: list[Decision] = []
        #: Every request statement heard, as read.
        self.stated: list[Request] = []
        #: Requests a several-at-once opening listed, still to serve, in the order said.
        self.agenda: list[Request] = []
        #: The trip a request's reservation was named by, when the customer gave no id.
        self.trips: dict[Request, str] = {}
        #: The reservation each trip named was found to be.
        self.located: dict[str, str] = {}
        self.heard = ""
        self.ended = False
        self._pending: dict[str, tuple[str, dict[str, Any]]] = {}
        self._results: dict[str, Any] = {}
        self._calls = 0
        self._end: Action = DONE if _offers(info, DONE_TOOL, True) else text_message(CLOSING)
        #: Under ``tool-reply`` the customer is reached through ``respond_to_user`` calls, whose
        #: results are its replies.
        self._through_tool = _offers(info, RESPOND_TOOL, False)
        self._script: Script = self.conversation()

    def act(self, observation: list[dict[str, Any]], info: dict[str, Any]) -> Action:
        """The next action, from the new messages in ``observation``."""
        self._observe(observation)
        if not self.ended:
            try:
                return next(self._script)
            except StopIteration:
                self.ended = True
        return self._end

    def _observe(self, observation: list[dict[str, Any]]) -> None:
        for message in observation or []:
            role = message.get("role")
            if role == "user":
                self.heard = str(message.get("content") or "")
            elif role == "tool":
                name, args = self._pending.pop(str(message.get("tool_call_id")), ("", {}))
                if name == RESPOND_TOOL:
                    self.heard = str(message.get("content") or "")
                elif name:
                    content = str(message.get("content") or "")
                    self._results[name] = self.world.ingest(name, args, content)

    # -- saying and calling ------------------------------------------------------------------------

    def say(self, text: str) -> Script:
        """Say ``text`` to the customer; the customer's reply."""
        self.heard = ""
        if self._through_tool:
            call_id = self._expect(RESPOND_TOOL, {})
            yield tool_call_message(RESPOND_TOOL, {"message": text}, call_id)
        else:
            yield text_message(text)
        return self.heard

    def call(self, calls: list[Call], content: str | None = None) -> Script:
        """Make ``calls`` in one message (``content`` beside them); the last call's result
        (None when it failed)."""
        tool_calls = []
        for c in calls:
            call_id = self._expect(c.name, dict(c.arguments))
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _json(c.arguments)},
                }
            )
        self._results = {}
        yield {"role": "assistant", "content": content, "tool_calls": tool_calls}
        return self._results.get(calls[-1].name) if calls else None

    def _expect(self, name: str, arguments: dict[str, Any]) -> str:
        """A new call id, its result awaited as ``name``'s (made with ``arguments``)."""
        self._calls += 1
        call_id = f"call_{self._calls}"
        self._pending[call_id] = (name, arguments)
        return call_id

    def hang_up(self) -> Script:
        """End the episode (``done``, or the closing question where ``done`` is not offered)."""
        self.ended = True
        yield self._end

    # -- the conversation --------------------------------------------------------------------------

    def conversation(self) -> Script:
        """The whole episode: identify the customer, then settle its requests in order."""
        text = self.heard
        for _ in range(3):
            self._identify(text)
            if self.user_id:
                break
            text = yield from self.say("Could you please give me your user id?")
        if not self.user_id:
            return
        request = self.next_request(text)
        for _ in range(2):
            if request is not None:
                break
            text = yield from self.say("How can I help you today?")
            request = self.next_request(text)
        while request is not None:
            text = yield from self.serve(request)
            request = self.next_request(text)
            if request is None and not self.ended:
                text = yield from self.say(CLOSING)
                request = self.next_request(text)

    def _identify(self, text: str) -> None:
        found = USER_ID_RE.search(text)
        if found:
            self.user_id = found[1]
        name = read_name(text)
        if name:
            self.name = " ".join(name)

    def next_request(self, text: str) -> Request | None:
        """The latest request statement in ``text`` that is not one already heard; a turn
        listing several things to sort out is an agenda, served in the order said. A request
        without a reservation id keeps the trip the turn names, to find its reservation by."""
        new = [r for r in read_requests(text) if r not in self.stated]
        if len(new) > 1 and AGENDA_RE.search(text):
            self.stated += new
            self.agenda += new[1:]
        elif new:
            new = new[-1:]
            self.stated += new
        else:
            return self.agenda.pop(0) if self.agenda else None
        trip = read_trip(text)
        for request in new:
            if trip and not request.reservation_id:
                self.trips[request] = trip
        return new[0]

    def serve(self, request: Request) -> Script:
        """Settle one request; the customer's last reply."""
        request = yield from self.find(request)
        question = details_question(request, self.wording)
        if question:
            answer = yield from self.say(question)
            request = read_details(answer, request)
        request, decision = yield from self.look_up(request)
        return (yield from self.act_on(request, decision))

    def find(self, request: Request) -> Script:
        """``request`` with the id of the reservation the customer named by its trip, found in
        its profile's reservations (unchanged when it gave an id)."""
        trip = self.trips.get(request)
        if trip in self.located:  # found before (a change since may have moved its first date)
            return replace(request, reservation_id=self.located[trip])
        for _ in range(_MAX_ROUNDS if trip and self.user_id else 0):
            calls, rid = locate(self.world, self.user_id or "", trip or "")
            if rid:
                self.located[trip or ""] = rid
                return replace(request, reservation_id=rid)
            if not calls:
                break
            yield from self.call(calls)
        return request

    def look_up(self, request: Request) -> Script:
        """Make the lookups the policy needs; (the request, the policy's decision or None)."""
        assert self.user_id is not None
        decision = None
        for _ in range(_MAX_ROUNDS):
            calls = wanted(self.world, self.user_id, request)
            if calls:
                yield from self.call(calls)
                continue
            request = resolve(self.world, self.user_id, request)
            decision = decide(
                self.world, self.user_id, self.name, self.decisions, [*self.requests, request]
            )
            missing = missing_reads(self.world, decision) if decision else []
            if not missing:
                break
            yield from self.call(missing)
        return request, decision

    def act_on(self, request: Request, decision: Decision | None) -> Script:
        """Do what the policy decided; the customer's last reply."""
        if decision is None:
            return (yield from self.refuse(request, decision))
        if any(w.name == TRANSFER_TOOL for w in decision.writes):
            return (yield from self.transfer(request, decision))
        if decision.outcome == "granted" and decision.say:
            return (yield from self.answer(request, decision))
        if decision.outcome == "granted" and decision.writes:
            return (yield from self.grant(request, decision))
        return (yield from self.refuse(request, decision))

    def settle(self, request: Request, decision: Decision | None, made: tuple[Call, ...]) -> None:
        """Remember how a request ended: the writes made (none: declined or refused)."""
        if decision is None:
            decision = Decision(len(self.decisions), "refused", "undecided")
        elif decision.writes and not made:
            decision = replace(decision, outcome="declined", writes=())
        else:
            decision = replace(decision, writes=made)
        self.requests.append(request)
        self.decisions.append(decision)

    def grant(self, request: Request, decision: Decision) -> Script:
        """Propose each write, make it on a yes, say it is done."""
        made: list[Call] = []
        reply = ""
        for write in decision.writes:
            reply = yield from self.propose(write, decision)
            if not said_yes(reply):
                break
            if (yield from self.write(write)) is not None:
                made.append(write)
        self.settle(request, decision, tuple(made))
        if not made:
            return reply
        return (yield from self.say(done_text(made[-1])))

    def propose(self, write: Call, decision: Decision) -> Script:
        """Ask for a yes to ``write``, its details listed; the customer's reply."""
        return (yield from self.say(f"{proposal(write, decision)} {self.wording.confirm_text}"))

    def write(self, write: Call) -> Script:
        """Make one write; its result (None when the tool refused it)."""
        return (yield from self.call([write]))

    def refuse(self, request: Request, decision: Decision | None) -> Script:
        """Say no, again after each push-back; the reply that moves on."""
        self.settle(request, decision, ())
        reply = ""
        for _ in range(3):
            reply = yield from self.say(self.wording.refuse_text)
            if self.moved_on(reply):
                break
        return reply

    def moved_on(self, reply: str) -> bool:
        """Whether the customer's reply accepts an answer (it says another request, or bye)."""
        new = any(r not in self.stated for r in read_requests(reply))
        return new or not reply or "understand" in reply.lower()

    def transfer(self, request: Request, decision: Decision) -> Script:
        """Hand the customer to a human agent, as the policy says."""
        self.settle(request, decision, tuple(decision.writes))
        transfer = next(w for w in decision.writes if w.name == TRANSFER_TOOL)
        yield from self.call([transfer])
        return (yield from self.say(HANDOFF))

    def answer(self, request: Request, decision: Decision) -> Script:
        """Tell the customer the figure it asked for."""
        self.settle(request, decision, ())
        return (yield from self.say(figure_text(decision.say[0])))


def _json(arguments: Any) -> str:
    import json

    return json.dumps(dict(arguments))
